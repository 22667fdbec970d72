import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import {
  addToWorkspace,
  bearer,
  createDocument,
  type DocHandle,
  newUser,
} from '../documents/documents.fixtures.js';
import {
  listen,
  openStream,
  REALTIME_TEST_ENV,
  type Received,
  realtimePath,
  waitFor,
} from '../realtime/realtime.fixtures.js';

interface CommentDto {
  id: string;
  mentions: string[];
  resolvedAt: string | null;
  resolvedBy: string | null;
}

/**
 * docs/comments.md, "Events": a comment event carries the stored values the REST answer shows — mentions in the
 * comment's stored order, resolvedAt as the row took it.
 */
describe('comment events match the REST comment they describe', () => {
  let t: TestApp;
  let base: string;
  let owner: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let doc: DocHandle;
  let stream: ReturnType<typeof openStream>;

  const comments = (suffix = ''): string => `${doc.path}/comments${suffix}`;
  const received = (type: string, commentId: string): Received[] =>
    stream.events.filter(
      (event) => event.type === type && (event.data.payload as { commentId: string }).commentId === commentId,
    );
  async function eventOf(type: string, commentId: string): Promise<Record<string, unknown>> {
    await waitFor(() => received(type, commentId).length > 0, 15_000, `${type} of ${commentId}`);
    return received(type, commentId)[0]?.data.payload as Record<string, unknown>;
  }
  const mentionIds = (payload: Record<string, unknown>): string[] =>
    (payload.mentions as { id: string }[]).map((mention) => mention.id);

  beforeAll(async () => {
    t = await createTestApp(REALTIME_TEST_ENV);
    base = await listen(t);
    owner = await newUser(t.http);
    editor = await newUser(t.http);
    viewer = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    doc = await createDocument(t.http, owner, { docType: 'notes' });
    stream = openStream(
      `${base}${realtimePath(doc, 'events/stream')}?workspaceId=${owner.defaultWorkspaceId}`,
      viewer.token,
    );
    await waitFor(() => stream.opened() === 1, 15_000, 'stream open');
  });
  afterAll(async () => {
    stream.es.close();
    await t.close();
  });

  it('resolve and pin events list the mentions in the stored order and carry the stored resolvedAt', async () => {
    // Both orders: whatever order the user directory answers in, one of them differs from it.
    for (const order of [
      [viewer.id, owner.id, editor.id],
      [editor.id, owner.id, viewer.id],
    ]) {
      const created = (
        await request(t.http)
          .post(comments())
          .set(bearer(editor))
          .send({ target: { scope: 'document' }, content: 'see @all', mentions: order })
          .expect(201)
      ).body.payload as CommentDto;
      expect(created.mentions).toEqual(order);
      expect(mentionIds(await eventOf('comment_created', created.id))).toEqual(order);

      await request(t.http)
        .post(comments(`/${created.id}/pin`))
        .set(bearer(owner))
        .expect(200);
      expect(mentionIds(await eventOf('comment_updated', created.id))).toEqual(order);

      const resolved = (
        await request(t.http)
          .post(comments(`/${created.id}/resolve`))
          .set(bearer(owner))
          .expect(200)
      ).body.payload as CommentDto;
      const fetched = (
        await request(t.http)
          .get(comments(`/${created.id}`))
          .set(bearer(viewer))
          .expect(200)
      ).body.payload as CommentDto;
      expect(fetched).toMatchObject({
        mentions: order,
        resolvedAt: resolved.resolvedAt,
        resolvedBy: owner.id,
      });
      const event = await eventOf('comment_resolved', created.id);
      expect(mentionIds(event)).toEqual(order);
      expect(event).toMatchObject({ resolvedAt: resolved.resolvedAt, resolvedBy: resolved.resolvedBy });
    }
  });

  it('an edit that keeps the mentions keeps their stored order, in the answer and the event', async () => {
    const order = [viewer.id, owner.id];
    const created = (
      await request(t.http)
        .post(comments())
        .set(bearer(editor))
        .send({ target: { scope: 'document' }, content: 'first', mentions: order })
        .expect(201)
    ).body.payload as CommentDto;
    const reversed = [...order].reverse();
    const other = (
      await request(t.http)
        .post(comments())
        .set(bearer(editor))
        .send({ target: { scope: 'document' }, content: 'second', mentions: reversed })
        .expect(201)
    ).body.payload as CommentDto;
    for (const [comment, expected] of [
      [created, order],
      [other, reversed],
    ] as const) {
      const edited = (
        await request(t.http)
          .put(comments(`/${comment.id}`))
          .set(bearer(editor))
          .send({ content: 'edited' })
          .expect(200)
      ).body.payload as CommentDto;
      expect(edited.mentions).toEqual(expected);
      expect(mentionIds(await eventOf('comment_updated', comment.id))).toEqual(expected);
    }
  });
});
