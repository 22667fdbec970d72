import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { Options } from 'pino-http';
import { pinoHttp } from 'pino-http';
import { loadConfig } from '../../config/app.config.js';
import { loggerOptions } from './logger.options.js';

/** Runs one request through pino-http configured exactly as the application does; returns the log lines. */
async function logOf(
  path: string,
  headers: Record<string, string>,
  extra?: (req: IncomingMessage) => void,
): Promise<{ lines: Array<Record<string, unknown>>; raw: string; requestId: string | null }> {
  let raw = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      raw += chunk.toString('utf8');
      done();
    },
  });
  const options = loggerOptions(loadConfig({ LOG_LEVEL: 'info' })).pinoHttp as Options;
  const middleware = pinoHttp(options, sink);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    middleware(req, res);
    extra?.(req);
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers });
    await response.text();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const lines = raw
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    return { lines, raw, requestId: response.headers.get('x-request-id') };
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('request logging', () => {
  it('logs JSON with the caller’s request id, echoes it, and leaves credentials out', async () => {
    const { lines, raw, requestId } = await logOf('/api/v1/users/me', {
      Authorization: 'Bearer secret-access-token',
      Cookie: 'session=secret-cookie',
      'X-API-Key': 'secret-api-key',
      'X-Request-Id': 'req-abc.123',
    });
    expect(requestId).toBe('req-abc.123');
    const completed = lines.find((line) => line.msg === 'request completed');
    expect(completed).toMatchObject({
      service: 'quire',
      req: { id: 'req-abc.123', method: 'GET', url: '/api/v1/users/me' },
    });
    expect(raw).not.toMatch(/secret-access-token|secret-cookie|secret-api-key/);
  });

  it('replaces an unsafe request id with a generated one', async () => {
    const { requestId, lines } = await logOf('/x', { 'X-Request-Id': 'bad id with spaces' });
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(lines[0]).toMatchObject({ req: { id: requestId } });
  });

  it('redacts tokens and secrets in query strings', async () => {
    const { raw } = await logOf(
      '/token?grant_type=refresh_token&refresh_token=secret-refresh&client_secret=secret-client&code=secret-code',
      {},
    );
    expect(raw).toContain('refresh_token=[redacted]');
    expect(raw).not.toMatch(/secret-refresh|secret-client|secret-code/);
  });

  it('redacts every credential-named query parameter, also ones no route accepts (a client may still send them)', async () => {
    const { raw } = await logOf(
      '/api/v1/users/me?access_token=secret-a&API_KEY=secret-b&apiKey=secret-c&shareCode=secret-d&secret=secret-e' +
        '&password=secret-f&id_token=secret-g&code_verifier=secret-h&key=secret-i&page=2',
      {},
    );
    expect(raw).toContain('access_token=[redacted]');
    expect(raw).toContain('shareCode=[redacted]');
    expect(raw).toContain('page=2');
    expect(raw).not.toMatch(/secret-[a-i]/);
  });

  it('redacts credential-named parameters whose names are percent-encoded or bracketed, as Express reads them', async () => {
    // Express decodes `access%5Ftoken` to `access_token` (and the extended parser reads `token[]` as `token`):
    // matched on the raw URL, these names slipped through with their values.
    const { raw } = await logOf(
      '/api/v1/users/me?access%5Ftoken=secret-a&to%6Ben=secret-b&%70assword=secret-c&token%5B%5D=secret-d' +
        '&api_key[0]=secret-e&ke%79=secret-f&page%5Fsize=20&bad%ZZname=1&%5Btoken%5D=secret-g&[secret]=secret-h',
      {},
    );
    expect(raw).toContain('access%5Ftoken=[redacted]');
    expect(raw).toContain('to%6Ben=[redacted]');
    expect(raw).toContain('page%5Fsize=20');
    expect(raw).toContain('bad%ZZname=1');
    expect(raw).not.toMatch(/secret-[a-h]/);
  });

  it('redacts the secrets some paths carry: invitation tokens and share codes', async () => {
    const invitation = await logOf('/api/v1/invitations/secret-invitation-token/accept', {});
    expect(invitation.raw).toContain('/api/v1/invitations/[redacted]/accept');
    const share = await logOf('/connect/share/secret-share-code?x=1', {});
    expect(share.raw).toContain('/connect/share/[redacted]?x=1');
    expect(invitation.raw + share.raw).not.toMatch(/secret-invitation-token|secret-share-code/);
    // Ids of an organization's invitations are not secrets and stay readable.
    const byId = await logOf('/api/v1/organizations/o1/invitations/i1', {});
    expect(byId.raw).toContain('/api/v1/organizations/o1/invitations/i1');
  });

  it('redacts password, token and secret fields in logged objects', async () => {
    const { raw } = await logOf('/x', {}, (req) => {
      (req as IncomingMessage & { log: { info(obj: object, msg: string): void } }).log.info(
        {
          body: { email: 'a@b.co', password: 'hunter2' },
          client: { clientSecret: 'shh-secret' },
          session: { refreshToken: 'rt-secret' },
        },
        'handling',
      );
    });
    expect(raw).toContain('a@b.co');
    expect(raw).not.toMatch(/hunter2|shh-secret|rt-secret/);
    expect(raw).toContain('[redacted]');
  });

  it('does not log probe and scrape requests', async () => {
    expect((await logOf('/health', {})).lines).toEqual([]);
    expect((await logOf('/health/ready?verbose=1', {})).lines).toEqual([]);
    expect((await logOf('/metrics', {})).lines).toEqual([]);
    expect((await logOf('/healthz', {})).lines).toHaveLength(1);
  });
});
