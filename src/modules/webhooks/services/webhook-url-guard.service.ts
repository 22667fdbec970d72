import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { Inject, Injectable } from '@nestjs/common';
import ipaddr from 'ipaddr.js';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';

/** A destination that passed the checks: the URL and the address to connect to (pinned against DNS rebinding). */
export interface CheckedDestination {
  url: URL;
  address: string;
  family: 4 | 6;
}

export class UnsafeDestinationError extends Error {}

/** The host name did not resolve within the time the caller allowed (an attempt's `timeout`). */
export class LookupTimeoutError extends Error {}

/**
 * Only plain public unicast addresses are allowed. ipaddr.js names every special range (loopback, private,
 * linkLocal — which holds the 169.254.169.254 metadata address —, uniqueLocal, multicast, unspecified,
 * broadcast, carrierGradeNat, reserved, benchmarking, 6to4/teredo/NAT64 forms that embed IPv4 …); anything
 * it does not call `unicast` is refused.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) {
    return false;
  }
  return ipaddr.process(address).range() === 'unicast';
}

/** C0 controls (tab, line feed, carriage return, NUL...), DEL and the C1 controls. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/** Why a webhook URL is not acceptable as written (before DNS), or null. */
export function urlSyntaxProblem(raw: string): string | null {
  // Checked on the raw text: the URL parser silently drops tabs and line breaks, so what is stored and shown would
  // differ from where deliveries go. Percent-encoded ones (%0D%0A) are ordinary URL text.
  if (CONTROL_CHARACTER.test(raw)) {
    return 'url must not contain control characters such as tabs or line breaks (percent-encode them)';
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return 'url must use http or https';
  }
  if (url.username || url.password) {
    return 'url must not carry credentials';
  }
  if (url.port === '0') {
    return 'url must not use port 0';
  }
  if (raw.length > 2000) {
    return 'url is too long (at most 2000 characters)';
  }
  return null;
}

/**
 * Server-side request forgery guard. Resolves the host and refuses the destination when any address it
 * resolves to is not public (a name with one private address among public ones is refused as a whole), at
 * creation and again before every attempt; the sender then connects to the address checked here, so a DNS
 * answer that changes between check and connect cannot redirect the request. WEBHOOK_ALLOW_PRIVATE=true
 * skips the address check (still pinning the address).
 */
@Injectable()
export class WebhookUrlGuard {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /**
   * `timeoutMs` bounds the DNS lookup (a delivery attempt passes what is left of its `timeout`): a resolver that
   * answers late must not keep an attempt past its lease (timeout + 30 s), after which another instance would make
   * the same attempt again. The lookup itself cannot be cancelled; its late answer is dropped.
   */
  async check(raw: string, timeoutMs?: number): Promise<CheckedDestination> {
    const problem = urlSyntaxProblem(raw);
    if (problem) {
      throw new UnsafeDestinationError(problem);
    }
    const url = new URL(raw);
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    let addresses: Array<{ address: string; family: number }>;
    if (ipaddr.isValid(host)) {
      addresses = [{ address: host, family: host.includes(':') ? 6 : 4 }];
    } else {
      addresses = await this.resolveWithin(host, timeoutMs);
    }
    if (addresses.length === 0) {
      throw new UnsafeDestinationError(`host ${host} could not be resolved`);
    }
    if (!this.config.webhooks.allowPrivate) {
      const refused = addresses.find((entry) => !isPublicAddress(entry.address));
      if (refused) {
        throw new UnsafeDestinationError(`destination resolves to a non-public address (${refused.address})`);
      }
    }
    const chosen = addresses[0];
    return { url, address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
  }

  /** Every address of `host`, from the system resolver (the one place the guard asks DNS). */
  resolve(host: string): Promise<LookupAddress[]> {
    return lookup(host, { all: true, verbatim: true });
  }

  private async resolveWithin(host: string, timeoutMs: number | undefined): Promise<LookupAddress[]> {
    let timer: NodeJS.Timeout | undefined;
    const answer = this.resolve(host).catch(() => {
      throw new UnsafeDestinationError(`host ${host} could not be resolved`);
    });
    if (timeoutMs === undefined) {
      return answer;
    }
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new LookupTimeoutError(`timed out after ${timeoutMs} ms resolving ${host}`)),
        Math.max(0, timeoutMs),
      );
    });
    // A late failure has no one waiting for it any more.
    answer.catch(() => undefined);
    try {
      return await Promise.race([answer, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}
