import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addToWorkspace, bearer, createDocument, type DocHandle, newUser } from '../documents/documents.fixtures.js';
import { problemsOf } from '../../utils/error-details.js';

interface OutboxRow {
  event_type: string;
  payload: Record<string, unknown>;
}

/**
 * Deleting a reply removes that reply only: answers to it (by anyone) stay in the thread, re-attached to the deleted
 * reply's parent with a `comment_updated` (`change: "reparented"`). Deleting a thread's top-level comment removes
 * the whole thread, every reply counted in `repliesDeleted` and given its own `comment_deleted`.
 */
describe('comments: deleting replies', () => {
  let t: TestApp;
  let owner: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let doc: DocHandle;

  const post = (user: { token: string }, body: Record<string, unknown>): request.Test => request(t.http).post(`${doc.path}/comments`).set(bearer(user)).send(body);
  const events = (commentId: string): Promise<OutboxRow[]> =>
    t.dataSource.query<OutboxRow[]>(`SELECT event_type, payload FROM outbox WHERE payload->>'commentId' = $1 ORDER BY seq`, [commentId]);

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    alice = await newUser(t.http);
    bob = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, alice, 'editor');
    await addToWorkspace(t.dataSource, owner, bob, 'editor');
    doc = await createDocument(t.http, owner);
  });
  afterAll(async () => {
    await t.close();
  });

  it("keeps other people's answers when a reply is deleted, re-attached to the deleted reply's parent", async () => {
    const thread = (await post(owner, { target: { scope: 'document' }, content: 'Thread' }).expect(201)).body.payload;
    const aliceReply = (await post(alice, { parentId: thread.id, content: 'Alice replies' }).expect(201)).body.payload;
    const bobAnswer = (await post(bob, { parentId: aliceReply.id, content: 'Bob answers Alice' }).expect(201)).body.payload;
    const ownerAnswer = (await post(owner, { parentId: bobAnswer.id, content: 'Owner answers Bob' }).expect(201)).body.payload;

    const deleted = await request(t.http).delete(`${doc.path}/comments/${aliceReply.id}`).set(bearer(alice)).expect(200);
    expect(deleted.body.payload).toEqual({ id: aliceReply.id, deleted: true, repliesDeleted: 0 });

    const bobNow = await request(t.http).get(`${doc.path}/comments/${bobAnswer.id}`).set(bearer(owner)).expect(200);
    expect(bobNow.body.payload).toMatchObject({ content: 'Bob answers Alice', parentId: thread.id, createdBy: bob.id });
    const ownerNow = await request(t.http).get(`${doc.path}/comments/${ownerAnswer.id}`).set(bearer(owner)).expect(200);
    expect(ownerNow.body.payload.parentId).toBe(bobAnswer.id);
    const listed = await request(t.http).get(`${doc.path}/comments/${thread.id}`).set(bearer(owner)).expect(200);
    expect(listed.body.payload.replies.map((reply: { id: string }) => reply.id)).toEqual([bobAnswer.id, ownerAnswer.id]);

    expect((await events(aliceReply.id)).map((event) => event.event_type)).toEqual(['comment_created', 'comment_deleted']);
    const moved = (await events(bobAnswer.id)).filter((event) => event.event_type === 'comment_updated');
    expect(moved.map((event) => event.payload)).toEqual([
      expect.objectContaining({ commentId: bobAnswer.id, change: 'reparented', parentId: thread.id, previousParentId: aliceReply.id, createdBy: bob.id }),
    ]);
    expect((await events(ownerAnswer.id)).map((event) => event.event_type)).toEqual(['comment_created']);
  });

  it('deletes a whole thread with every reply, nested ones included, counted and each with comment_deleted', async () => {
    const thread = (await post(alice, { target: { scope: 'document' }, content: 'Alice thread' }).expect(201)).body.payload;
    const first = (await post(bob, { parentId: thread.id, content: 'Bob' }).expect(201)).body.payload;
    const nested = (await post(owner, { parentId: first.id, content: 'Owner on Bob' }).expect(201)).body.payload;

    const deleted = await request(t.http).delete(`${doc.path}/comments/${thread.id}`).set(bearer(alice)).expect(200);
    expect(deleted.body.payload).toEqual({ id: thread.id, deleted: true, repliesDeleted: 2 });
    for (const reply of [first, nested]) {
      await request(t.http).get(`${doc.path}/comments/${reply.id}`).set(bearer(owner)).expect(404);
      const gone = (await events(reply.id)).filter((event) => event.event_type === 'comment_deleted');
      expect(gone.map((event) => event.payload)).toEqual([expect.objectContaining({ commentId: reply.id, deletedBy: alice.id, deletedWithThread: thread.id })]);
    }
    const left = await t.dataSource.query<{ n: string }[]>(`SELECT count(*) AS n FROM comments WHERE id = ANY($1::uuid[])`, [[thread.id, first.id, nested.id]]);
    expect(Number(left[0]?.n)).toBe(0);
  });

  it('refuses whitespace-only content on create and edit, and writes nothing', async () => {
    const before = Number((await t.dataSource.query<{ n: string }[]>(`SELECT count(*) AS n FROM comments`))[0]?.n);
    for (const content of ['   ', '\n\t ', '\u00a0']) {
      const res = await post(owner, { target: { scope: 'document' }, content }).expect(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(problemsOf(res.body).map((detail: { field: string }) => detail.field)).toContain('content');
    }
    expect(Number((await t.dataSource.query<{ n: string }[]>(`SELECT count(*) AS n FROM comments`))[0]?.n)).toBe(before);
    const comment = (await post(owner, { target: { scope: 'document' }, content: '  kept as written  ' }).expect(201)).body.payload;
    expect(comment.content).toBe('  kept as written  ');
    const edit = await request(t.http).put(`${doc.path}/comments/${comment.id}`).set(bearer(owner)).send({ content: '   ' }).expect(400);
    expect(edit.body.code).toBe('VALIDATION_ERROR');
    expect((await request(t.http).get(`${doc.path}/comments/${comment.id}`).set(bearer(owner)).expect(200)).body.payload.content).toBe('  kept as written  ');
  });
});
