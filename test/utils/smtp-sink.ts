import { createServer, type Server, type Socket } from 'node:net';

/** One message as the sink received it: the envelope and the raw DATA (headers and body). */
export interface ReceivedMail {
  from: string;
  to: string[];
  data: string;
}

/**
 * How the sink answers: `accept` takes every message; `unavailable` greets with 421 and hangs up, as a
 * server does while it is overloaded or shutting down (a temporary failure a client must retry).
 */
export type SmtpSinkMode = 'accept' | 'unavailable';

/**
 * A tiny SMTP server on loopback for tests: just enough of RFC 5321 for nodemailer (EHLO/HELO, MAIL,
 * RCPT, DATA, RSET, NOOP, QUIT; no STARTTLS, no AUTH). It records what it accepts, so a test can check
 * that a message arrived and how often.
 */
export class SmtpSink {
  readonly received: ReceivedMail[] = [];
  mode: SmtpSinkMode = 'accept';
  /** Delay before answering the end of DATA, so concurrent senders overlap. */
  dataDelayMs = 0;
  /** Connections seen, in any mode (a refused greeting counts too). */
  connections = 0;
  private server?: Server;
  private readonly sockets = new Set<Socket>();

  /** Starts listening on 127.0.0.1 (`port` 0: a free one) and answers the port. */
  async listen(port = 0): Promise<number> {
    const server = createServer((socket) => this.serve(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    return typeof address === 'object' && address ? address.port : port;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) {
      socket.destroy();
    }
    const server = this.server;
    this.server = undefined;
    if (server) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  /** The messages whose raw data contains `text`. */
  matching(text: string): ReceivedMail[] {
    return this.received.filter((mail) => mail.data.includes(text));
  }

  private serve(socket: Socket): void {
    this.connections += 1;
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    if (this.mode === 'unavailable') {
      socket.end('421 4.3.2 sink unavailable, try again later\r\n');
      return;
    }
    const reply = (line: string): void => {
      socket.write(`${line}\r\n`);
    };
    let buffer = '';
    let inData = false;
    let envelope: { from: string; to: string[] } = { from: '', to: [] };
    let dataLines: string[] = [];

    const onLine = (line: string): void => {
      if (inData) {
        if (line === '.') {
          inData = false;
          const mail = { ...envelope, data: dataLines.join('\r\n') };
          envelope = { from: '', to: [] };
          dataLines = [];
          setTimeout(() => {
            this.received.push(mail);
            reply('250 2.0.0 queued');
          }, this.dataDelayMs);
          return;
        }
        // Transparency (RFC 5321 4.5.2): the client doubled a leading dot.
        dataLines.push(line.startsWith('..') ? line.slice(1) : line);
        return;
      }
      const verb = line.slice(0, 4).toUpperCase();
      switch (verb) {
        case 'EHLO':
        case 'HELO':
          reply('250 sink.test');
          return;
        case 'MAIL':
          envelope = { from: /<([^>]*)>/.exec(line)?.[1] ?? '', to: [] };
          reply('250 2.1.0 ok');
          return;
        case 'RCPT':
          envelope.to.push(/<([^>]*)>/.exec(line)?.[1] ?? '');
          reply('250 2.1.5 ok');
          return;
        case 'DATA':
          inData = true;
          reply('354 end data with <CR><LF>.<CR><LF>');
          return;
        case 'RSET':
          envelope = { from: '', to: [] };
          reply('250 2.0.0 ok');
          return;
        case 'NOOP':
          reply('250 2.0.0 ok');
          return;
        case 'QUIT':
          socket.end('221 2.0.0 bye\r\n');
          return;
        default:
          reply('502 5.5.2 command not implemented');
      }
    };

    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      let end = buffer.indexOf('\r\n');
      while (end >= 0) {
        onLine(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf('\r\n');
      }
    });
    reply('220 sink.test ESMTP test sink');
  }
}
