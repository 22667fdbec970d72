import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { embeddedDataLocation } from '../../../src/database/embedded-postgres.js';
import { createTestDatabase } from '../../utils/test-database.js';

/** The built service (`npm test` builds dist/ first), started exactly as in production. */
interface Service {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

async function startService(env: Record<string, string | undefined>): Promise<Service> {
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${output}`)), 30_000);
    const check = (): void => {
      const match = /Quire listening on port (\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stdout?.on('data', check);
    void exited.then((code) => reject(new Error(`service exited with ${code}:\n${output}`)));
  });
  return { child, port, output: () => output, exited };
}

async function refused(port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1000) });
    return false;
  } catch {
    return true;
  }
}

async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('start-up of the built service (node dist/src/main.js)', () => {
  it.each([
    ['PORT', 'eighty'],
    ['DATABASE_URL', 'mysql://db/quire'],
    ['LOG_LEVEL', 'loud'],
  ])('refuses to start when %s is %s, naming the variable', async (name, value) => {
    const child = spawn(process.execPath, ['dist/src/main.js'], {
      env: { ...process.env, [name]: value },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toMatch(new RegExp(`^Configuration error: ${name} must`));
  });
});

describe('graceful shutdown of the built service (node dist/src/main.js)', () => {
  it('on SIGTERM stops accepting, finishes the in-flight request, closes the pool and exits 0', async () => {
    const database = await createTestDatabase();
    const service = await startService({ DATABASE_URL: database.url });
    try {
      expect(service.output()).toMatch(/Swagger UI: http:\/\/localhost:\d+\/api\/docs/);
      expect(service.output()).toMatch(/Database: +DATABASE_URL postgres/);
      expect((await fetch(`http://127.0.0.1:${service.port}/health`)).status).toBe(200);

      // A registration whose body is still arriving when SIGTERM comes.
      const body = JSON.stringify({
        email: `drain-${randomUUID().slice(0, 8)}@example.test`,
        password: 'correct horse battery staple',
        displayName: 'Drain',
      });
      const socket = new Socket();
      let response = '';
      socket.on('data', (chunk: Buffer) => (response += chunk.toString()));
      await new Promise<void>((resolve) => socket.connect(service.port, '127.0.0.1', resolve));
      socket.write(
        `POST /api/v1/auth/register HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n` +
          body.slice(0, 20),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));

      service.child.kill('SIGTERM');
      await waitFor(() => service.output().includes('SIGTERM received'), 'the signal to be handled');
      await waitFor(() => refused(service.port), 'the listener to close');
      expect(
        await Promise.race([
          service.exited.then(() => 'exited'),
          new Promise((r) => setTimeout(() => r('running'), 200)),
        ]),
      ).toBe('running');

      socket.write(body.slice(20));
      await waitFor(() => response.includes('"success"'), 'the in-flight response');
      expect(response).toMatch(/^HTTP\/1\.1 201 /);
      expect(response).toContain('"accessToken"');
      socket.destroy();

      expect(await service.exited).toBe(0);
      expect(service.output()).toContain('stopped');
      expect(service.output()).not.toMatch(/pool raised an error|Start-up failed|shutdown failed/);
    } finally {
      service.child.kill('SIGKILL');
      await database.drop();
    }
  });

  it('with the embedded database: stops PostgreSQL too and exits 0', async () => {
    const dataDir = `.data/shutdown-test-${process.pid}-${randomUUID().slice(0, 6)}`;
    // As root from a checkout the postgres user cannot enter (under /root), the data lives elsewhere.
    const pgDir = embeddedDataLocation(`${dataDir}/pg`).path;
    const service = await startService({ DATABASE_URL: undefined, DATA_DIR: dataDir });
    try {
      expect(service.output()).toContain(`embedded PostgreSQL (data in ${pgDir}`);
      expect((await fetch(`http://127.0.0.1:${service.port}/health/ready`)).status).toBe(200);
      expect(existsSync(`${pgDir}/postmaster.pid`)).toBe(true);
      service.child.kill('SIGTERM');
      expect(await service.exited).toBe(0);
      // A clean PostgreSQL shutdown removes its pid file.
      expect(existsSync(`${pgDir}/postmaster.pid`)).toBe(false);
      expect(service.output()).not.toMatch(
        /pool raised an error|shutdown failed|stopping the embedded database failed/,
      );
    } finally {
      service.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(pgDir, { recursive: true, force: true });
    }
  });
});
