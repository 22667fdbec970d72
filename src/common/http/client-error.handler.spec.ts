import { clientErrorResponse } from './client-error.handler.js';

function parse(raw: string): { statusLine: string; headers: string; body: Record<string, unknown> } {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  const [statusLine = '', ...headers] = head.split('\r\n');
  return { statusLine, headers: headers.join('\n'), body: JSON.parse(body) as Record<string, unknown> };
}

describe('clientErrorResponse', () => {
  it.each([
    ['HPE_HEADER_OVERFLOW', 'HTTP/1.1 431 Request Header Fields Too Large', 'REQUEST_HEADER_FIELDS_TOO_LARGE'],
    ['HPE_CHUNK_EXTENSIONS_OVERFLOW', 'HTTP/1.1 413 Payload Too Large', 'PAYLOAD_TOO_LARGE'],
    ['ERR_HTTP_REQUEST_TIMEOUT', 'HTTP/1.1 408 Request Timeout', 'REQUEST_TIMEOUT'],
    ['HPE_INVALID_METHOD', 'HTTP/1.1 400 Bad Request', 'VALIDATION_ERROR'],
    [undefined, 'HTTP/1.1 400 Bad Request', 'VALIDATION_ERROR'],
  ])('answers %s with the envelope and its status', (nodeCode, statusLine, code) => {
    const raw = clientErrorResponse(nodeCode);
    const answer = parse(raw);
    expect(answer.statusLine).toBe(statusLine);
    expect(answer.headers).toContain('Connection: close');
    expect(answer.headers).toContain(`Content-Length: ${Buffer.byteLength(raw.split('\r\n\r\n')[1] ?? '')}`);
    expect(answer.body).toMatchObject({ success: false, code, payload: null, details: { reason: expect.any(String) } });
  });
});
