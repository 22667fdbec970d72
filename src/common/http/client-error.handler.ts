import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { ErrorCode } from '../errors/error-code.js';
import { httpStatusOf } from '../errors/error-status.js';
import { messageOf } from '../i18n/error-messages.js';
import type { Envelope } from './envelope.js';

/** Node's parser and timeout errors (the `code` of a `clientError`), as answer code and reason. */
function answerFor(code: string | undefined): { code: ErrorCode; reason: string } {
  switch (code ?? '') {
    case 'HPE_HEADER_OVERFLOW':
      return { code: ErrorCode.REQUEST_HEADER_FIELDS_TOO_LARGE, reason: 'the request line and headers are too large' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { code: ErrorCode.PAYLOAD_TOO_LARGE, reason: 'the chunk extensions are too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: ErrorCode.REQUEST_TIMEOUT, reason: 'the request was not received in time' };
    default:
      return { code: ErrorCode.VALIDATION_ERROR, reason: 'malformed HTTP request' };
  }
}

/** The raw HTTP/1.1 answer to a request Node could not parse: the envelope, then the connection closes. */
export function clientErrorResponse(errorCode: string | undefined): string {
  const { code, reason } = answerFor(errorCode);
  const status = httpStatusOf(code);
  const body: Envelope<null> = { success: false, code, message: messageOf(code), payload: null, details: { reason } };
  const json = JSON.stringify(body);
  return [
    `HTTP/1.1 ${status} ${reasonPhrase(status)}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(json)}`,
    'Connection: close',
    '',
    json,
  ].join('\r\n');
}

function reasonPhrase(status: number): string {
  switch (status) {
    case 408:
      return 'Request Timeout';
    case 413:
      return 'Payload Too Large';
    case 431:
      return 'Request Header Fields Too Large';
    default:
      return 'Bad Request';
  }
}

/**
 * Answers what Node's HTTP parser refuses before any route sees it (a request line and headers over Node's limit,
 * a malformed request line, a header timeout) with the envelope instead of Node's bodiless status line
 * (docs/errors.md). A listener replaces Node's own answer, so it must close the socket itself: it is destroyed once
 * the answer is flushed, or at once when nothing can be written (a reset, an answer already under way).
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    // As Node does: no answer when an earlier (pipelined) request's answer has started on this socket.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorResponse(error.code), () => socket.destroy());
  });
}
