import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { CheckedDestination } from './webhook-url-guard.service.js';

/** How much of a response body is kept in the delivery record. */
export const RESPONSE_EXCERPT_BYTES = 2048;

export interface SendResult {
  status: number | null;
  bodyExcerpt: string | null;
  durationMs: number;
  error: string | null;
}

/**
 * The kept part of an answer as text. Bytes that are not UTF-8 become U+FFFD, and so do NUL characters: PostgreSQL
 * text cannot hold them, and an attempt whose record fails is sent again when its lease expires, over and over.
 */
function excerptOf(chunks: Buffer[]): string {
  return Buffer.concat(chunks).toString('utf8').replaceAll('\u0000', '\ufffd');
}

/** Resolves every lookup to the address the URL guard checked. */
function pinnedLookup(destination: CheckedDestination): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) {
      callback(null, [{ address: destination.address, family: destination.family }]);
    } else {
      callback(null, destination.address, destination.family);
    }
  };
}

/**
 * One POST, outside any transaction: connects to the pinned address (TLS still verifies the certificate
 * for the URL's host name), follows no redirect (a 3xx is a failed attempt), gives up `timeoutMs` after the
 * attempt began — `spentMs` ago, when its DNS lookup started — and keeps at most RESPONSE_EXCERPT_BYTES of the answer.
 */
export function sendWebhook(
  destination: CheckedDestination,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  spentMs = 0,
): Promise<SendResult> {
  const started = performance.now() - spentMs;
  const transport = destination.url.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (result: Omit<SendResult, 'durationMs'>): void => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        resolve({ ...result, durationMs: Math.round(performance.now() - started) });
      }
    };
    const request = transport.request(
      destination.url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: pinnedLookup(destination),
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        const done = (): void => {
          finish({
            status: response.statusCode ?? null,
            bodyExcerpt: excerptOf(chunks),
            error: null,
          });
          response.destroy();
        };
        response.on('data', (chunk: Buffer) => {
          if (kept < RESPONSE_EXCERPT_BYTES) {
            const part = chunk.subarray(0, RESPONSE_EXCERPT_BYTES - kept);
            chunks.push(part);
            kept += part.length;
          }
          if (kept >= RESPONSE_EXCERPT_BYTES) {
            done();
          }
        });
        response.on('end', done);
        response.on('error', (error) =>
          finish({
            status: response.statusCode ?? null,
            bodyExcerpt: excerptOf(chunks),
            error: error.message,
          }),
        );
      },
    );
    const timer = setTimeout(() => {
      finish({ status: null, bodyExcerpt: null, error: `timed out after ${timeoutMs} ms` });
      request.destroy();
    }, Math.max(0, timeoutMs - spentMs));
    request.on('error', (error) => finish({ status: null, bodyExcerpt: null, error: error.message }));
    request.end(body);
  });
}
