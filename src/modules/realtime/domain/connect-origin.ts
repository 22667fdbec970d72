/**
 * Where `GET .../connect` tells a client to connect: the address the request came to when its host is a plain host
 * name or IP address with an optional port, else PUBLIC_BASE_URL. The Host header (or X-Forwarded-Host from a
 * trusted proxy) is the client's own text: anything else in it — a path, user info, a query, a port out of range,
 * stray characters — would land in `wsUrl` and `sseUrl` (which carries the connect token) or fail to parse.
 */
export interface ConnectOrigin {
  secure: boolean;
  /** Host name or IP address as a URL writes it (IPv6 in brackets), lower case. */
  hostname: string;
  port: number;
  /** `hostname`, plus `:port` when it is not the scheme's default. */
  authority: string;
  /** Path prefix of PUBLIC_BASE_URL (no trailing slash); empty for a request's own host. */
  prefix: string;
}

/** DNS-style labels (underscores allowed: container and service names use them), dot-separated, no empty label. */
const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/i;
const IPV6 = /^\[[0-9a-f:.]{2,45}\]$/i;
const PORT = /^[0-9]{1,5}$/;

function defaultPort(secure: boolean): number {
  return secure ? 443 : 80;
}

function originOf(secure: boolean, hostname: string, port: number, prefix: string): ConnectOrigin {
  return {
    secure,
    hostname,
    port,
    authority: port === defaultPort(secure) ? hostname : `${hostname}:${port}`,
    prefix,
  };
}

/**
 * `host[:port]` when `raw` is exactly a host name, an IPv4 address or a bracketed IPv6 address with an optional
 * port 1–65535; null for anything else.
 */
export function parseHostHeader(raw: string | undefined, secure: boolean): ConnectOrigin | null {
  if (!raw) {
    return null;
  }
  const match = /^(\[[^\]]*\]|[^:]*)(?::([^:]*))?$/.exec(raw);
  if (!match) {
    return null;
  }
  const [, name, portText] = match;
  if (!(HOST_NAME.test(name) || IPV6.test(name))) {
    return null;
  }
  if (portText !== undefined && !PORT.test(portText)) {
    return null;
  }
  const port = portText === undefined ? defaultPort(secure) : Number(portText);
  if (port < 1 || port > 65535) {
    return null;
  }
  // The WHATWG parser has the last word: `999.1.1.1` looks like a name but is a malformed IPv4 address.
  let hostname: string;
  try {
    hostname = new URL(`http://${name}`).hostname;
  } catch {
    return null;
  }
  return originOf(secure, hostname, port, '');
}

/** The origin of PUBLIC_BASE_URL (validated at boot as an http(s) URL), with its path as the prefix. */
export function publicOrigin(publicBaseUrl: string): ConnectOrigin {
  const url = new URL(publicBaseUrl);
  const secure = url.protocol === 'https:';
  return originOf(
    secure,
    url.hostname,
    url.port === '' ? defaultPort(secure) : Number(url.port),
    url.pathname.replace(/\/+$/, ''),
  );
}

/** The request's own host when it is valid (see parseHostHeader), else PUBLIC_BASE_URL. */
export function connectOrigin(
  host: string | undefined,
  protocol: string,
  publicBaseUrl: string,
): ConnectOrigin {
  return parseHostHeader(host, protocol === 'https') ?? publicOrigin(publicBaseUrl);
}
