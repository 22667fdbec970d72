import { PassLoop } from './pass-loop.js';

/** A pass the test finishes by hand, counting how many ran and how many overlapped. */
function controlledPasses(): {
  pass: () => Promise<number>;
  finish: (result?: number) => void;
  started: () => number;
  maxConcurrent: () => number;
} {
  const pending: Array<(result: number) => void> = [];
  let started = 0;
  let running = 0;
  let maxConcurrent = 0;
  return {
    pass: () => {
      started += 1;
      running += 1;
      maxConcurrent = Math.max(maxConcurrent, running);
      return new Promise<number>((resolve) =>
        pending.push((result) => {
          running -= 1;
          resolve(result);
        }),
      );
    },
    finish: (result = 0) => pending.shift()?.(result),
    started: () => started,
    maxConcurrent: () => maxConcurrent,
  };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('PassLoop', () => {
  it('never overlaps passes and runs one more pass for any number of kicks during a pass', async () => {
    const passes = controlledPasses();
    const loop = new PassLoop(passes.pass, () => undefined);
    loop.kick();
    loop.kick();
    loop.kick();
    expect(passes.started()).toBe(1);
    passes.finish();
    await settle();
    expect(passes.started()).toBe(2);
    passes.finish();
    await settle();
    expect(passes.started()).toBe(2);
    expect(passes.maxConcurrent()).toBe(1);
  });

  it('goes again at once when a pass says more is waiting', async () => {
    const passes = controlledPasses();
    const loop = new PassLoop(passes.pass, () => undefined, (handled) => handled >= 10);
    loop.kick();
    passes.finish(10);
    await settle();
    expect(passes.started()).toBe(2);
    passes.finish(3);
    await settle();
    expect(passes.started()).toBe(2);
  });

  it('logs a failed pass and keeps taking kicks', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const loop = new PassLoop(
      () => {
        calls += 1;
        return calls === 1 ? Promise.reject(new Error('boom')) : Promise.resolve(1);
      },
      (error) => errors.push(error),
    );
    loop.kick();
    await settle();
    loop.kick();
    await settle();
    expect(errors).toHaveLength(1);
    expect(calls).toBe(2);
  });

  it('runNow waits for the pass in progress, then answers its own result', async () => {
    const passes = controlledPasses();
    const loop = new PassLoop(passes.pass, () => undefined);
    loop.kick();
    const result = loop.runNow();
    await settle();
    expect(passes.started()).toBe(1);
    passes.finish(1);
    await settle();
    expect(passes.started()).toBe(2);
    passes.finish(7);
    await expect(result).resolves.toBe(7);
    expect(passes.maxConcurrent()).toBe(1);
  });

  it('stop waits for the pass in progress and ignores later kicks', async () => {
    const passes = controlledPasses();
    const loop = new PassLoop(passes.pass, () => undefined);
    loop.kick();
    loop.kick();
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    expect(loop.stopping).toBe(true);
    await settle();
    expect(stopped).toBe(false);
    passes.finish();
    await stopping;
    loop.kick();
    await settle();
    expect(passes.started()).toBe(1);
  });
});
