import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addToWorkspace, bearer, createDocument, createRow, type DocHandle, newUser, scopedToken } from '../documents/documents.fixtures.js';
import { problemsOf } from '../../utils/error-details.js';

interface OutboxRow {
  event_type: string;
  payload: Record<string, unknown>;
  triggered_by: string;
}

describe('comments', () => {
  let t: TestApp;
  let owner: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let outsider: TestUser;
  let doc: DocHandle;
  let otherDoc: DocHandle;

  const events = (commentId: string): Promise<OutboxRow[]> =>
    t.dataSource.query<OutboxRow[]>(`SELECT event_type, payload, triggered_by FROM outbox WHERE payload->>'commentId' = $1 ORDER BY seq`, [commentId]);
  const commentCount = async (): Promise<number> => Number((await t.dataSource.query<{ n: string }[]>(`SELECT count(*) AS n FROM comments`))[0]?.n);
  const post = (user: { token: string }, body: Record<string, unknown>, path = doc.path): request.Test =>
    request(t.http).post(`${path}/comments`).set(bearer(user)).send(body);

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    editor = await newUser(t.http);
    viewer = await newUser(t.http);
    outsider = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    doc = await createDocument(t.http, owner);
    otherDoc = await createDocument(t.http, owner);
    await createRow(t.http, owner, doc, { id: 'r1', values: { name: 'One' } });
    await createRow(t.http, owner, otherDoc, { id: 'foreign', values: { name: 'Elsewhere' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates comments on the document, a field, a row and a cell, with comment_created', async () => {
    const res = await post(editor, { target: { scope: 'document' }, content: 'Looks good' }).expect(201);
    const comment = res.body.payload;
    expect(comment).toMatchObject({
      docType: doc.docType,
      docId: doc.docId,
      target: { scope: 'document' },
      targetDeleted: false,
      parentId: null,
      content: 'Looks good',
      mentions: [],
      reactions: [],
      pinned: false,
      resolved: false,
      createdBy: editor.id,
      replies: [],
    });
    const field = await post(editor, { target: { scope: 'field', fieldId: 'price' }, content: 'Currency?' }).expect(201);
    expect(field.body.payload.target).toEqual({ scope: 'field', fieldId: 'price' });
    const row = await post(editor, { target: { scope: 'row', rowId: 'r1' }, content: 'Row note' }).expect(201);
    expect(row.body.payload.target).toEqual({ scope: 'row', rowId: 'r1' });
    const cell = await post(editor, { target: { scope: 'cell', rowId: 'r1', fieldId: 'name' }, content: 'Typo' }).expect(201);
    expect(cell.body.payload.target).toEqual({ scope: 'cell', fieldId: 'name', rowId: 'r1' });

    const recorded = await events(comment.id);
    expect(recorded.map((event) => event.event_type)).toEqual(['comment_created']);
    expect(recorded[0]?.payload).toMatchObject({ commentId: comment.id, target: { scope: 'document' }, content: 'Looks good', mentions: [], createdBy: editor.id, createdAt: comment.createdAt });

    const one = await request(t.http).get(`${doc.path}/comments/${comment.id}`).set(bearer(viewer)).expect(200);
    expect(one.body.payload.id).toBe(comment.id);
    // The document context may be named in the query or the header, like on every /doc route.
    const scoped = await request(t.http).get(`${doc.path}/comments?workspaceId=${owner.defaultWorkspaceId}&scope=document`).set(bearer(viewer)).expect(200);
    expect(scoped.body.payload.items.map((item: { id: string }) => item.id)).toEqual([comment.id]);
    await request(t.http)
      .post(`${doc.path}/comments/${comment.id}/reactions?emoji=tada&workspaceId=${owner.defaultWorkspaceId}`)
      .set(bearer(editor))
      .expect(200);
    await request(t.http).delete(`${doc.path}/comments/${comment.id}/reactions/tada`).set(bearer(editor)).set('X-Workspace-Id', owner.defaultWorkspaceId).expect(200);
  });

  it('refuses bad targets with VALIDATION_ERROR and writes nothing', async () => {
    const before = await commentCount();
    const cases: [Record<string, unknown>, string][] = [
      [{ scope: 'field', fieldId: 'nope' }, 'target.fieldId'],
      [{ scope: 'row', rowId: 'missing' }, 'target.rowId'],
      [{ scope: 'row', rowId: 'foreign' }, 'target.rowId'],
      [{ scope: 'cell', rowId: 'r1' }, 'target.fieldId'],
      [{ scope: 'row' }, 'target.rowId'],
      [{ scope: 'document', rowId: 'r1' }, 'target.rowId'],
      [{ scope: 'page' }, 'target.scope'],
    ];
    for (const [target, field] of cases) {
      const res = await post(editor, { target, content: 'x' }).expect(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(problemsOf(res.body).map((detail: { field: string }) => detail.field)).toContain(field);
    }
    expect((await post(editor, { content: 'no target' }).expect(400)).body.code).toBe('VALIDATION_ERROR');
    expect((await post(editor, { target: { scope: 'document' }, content: '' }).expect(400)).body.code).toBe('VALIDATION_ERROR');
    expect(await commentCount()).toBe(before);
  });

  it('takes a document property as the field of a field comment (a cell comment needs a row field)', async () => {
    const withBudget = await createDocument(t.http, owner, { properties: [{ id: 'budget', name: 'Budget', type: 'number' }] });
    const res = await post(editor, { target: { scope: 'field', fieldId: 'budget' }, content: 'Is this net?' }, withBudget.path).expect(201);
    expect(res.body.payload).toMatchObject({ target: { scope: 'field', fieldId: 'budget' }, targetDeleted: false });
    await createRow(t.http, owner, withBudget, { id: 'r1', values: { name: 'One' } });
    const cell = await post(editor, { target: { scope: 'cell', rowId: 'r1', fieldId: 'budget' }, content: 'x' }, withBudget.path).expect(400);
    expect(problemsOf(cell.body).map((detail: { field: string }) => detail.field)).toEqual(['target.fieldId']);
    // The property removed, the comment stays and says its target is gone.
    const metadata = (await request(t.http).get(`${withBudget.path}/metadata`).set(bearer(owner)).expect(200)).body.payload;
    await request(t.http).put(`${withBudget.path}/metadata`).set(bearer(owner)).send({ fields: metadata.fields, properties: [] }).expect(200);
    const read = await request(t.http).get(`${withBudget.path}/comments/${res.body.payload.id}`).set(bearer(editor)).expect(200);
    expect(read.body.payload).toMatchObject({ target: { scope: 'field', fieldId: 'budget' }, targetDeleted: true });
  });

  it('takes requestId and the deprecated apply on every write (saved at once, apply answering X-API-Deprecated) and refuses unknown query parameters', async () => {
    const applied = await request(t.http).post(`${doc.path}/comments?apply=true`).set(bearer(editor)).send({ target: { scope: 'document' }, content: 'Direct' }).expect(201);
    expect(applied.headers['x-api-deprecated']).toBe('true');
    const id = applied.body.payload.id as string;
    const plain = await request(t.http).put(`${doc.path}/comments/${id}?requestId=any`).set(bearer(editor)).send({ content: 'Edited' }).expect(200);
    // mentions null clears them, as on create (was a 500).
    expect((await request(t.http).put(`${doc.path}/comments/${id}`).set(bearer(editor)).send({ content: 'Edited', mentions: null }).expect(200)).body.payload.mentions).toEqual([]);
    expect(plain.headers['x-api-deprecated']).toBeUndefined();
    expect(plain.body.payload.content).toBe('Edited');
    for (const path of [`pin?apply=true`, `resolve?apply=false`, `reactions?emoji=tada&apply=true`]) {
      const res = await request(t.http).post(`${doc.path}/comments/${id}/${path}`).set(bearer(editor)).expect(200);
      expect(res.headers['x-api-deprecated']).toBe('true');
    }
    const unreacted = await request(t.http).delete(`${doc.path}/comments/${id}/reactions/tada?apply=true`).set(bearer(editor)).expect(200);
    expect(unreacted.headers['x-api-deprecated']).toBe('true');

    const before = await commentCount();
    const unknown = await request(t.http).post(`${doc.path}/comments?foo=1`).set(bearer(editor)).send({ target: { scope: 'document' }, content: 'x' }).expect(400);
    expect(unknown.body.code).toBe('VALIDATION_ERROR');
    expect(await commentCount()).toBe(before);
    expect((await request(t.http).get(`${doc.path}/comments/${id}?foo=1`).set(bearer(viewer)).expect(400)).body.code).toBe('VALIDATION_ERROR');
    expect((await request(t.http).delete(`${doc.path}/comments/${id}?foo=1`).set(bearer(editor)).expect(400)).body.code).toBe('VALIDATION_ERROR');
    await request(t.http).delete(`${doc.path}/comments/${id}?apply=true`).set(bearer(editor)).expect(200);
  });

  it('threads: replies in the same document, listed oldest first under their thread; threads newest first', async () => {
    const thread = (await post(owner, { target: { scope: 'row', rowId: 'r1' }, content: 'Thread' }).expect(201)).body.payload;
    const first = (await post(editor, { parentId: thread.id, content: 'First reply' }).expect(201)).body.payload;
    expect(first).toMatchObject({ parentId: thread.id, target: { scope: 'row', rowId: 'r1' } });
    // A reply to a reply joins the same thread.
    const second = (await post(owner, { parentId: first.id, content: 'Second reply' }).expect(201)).body.payload;
    expect(second.parentId).toBe(first.id);

    const otherThread = (await post(owner, { target: { scope: 'document' }, content: 'Other doc' }, otherDoc.path).expect(201)).body.payload;
    const wrongParent = await post(owner, { parentId: otherThread.id, content: 'cross' }).expect(400);
    expect(wrongParent.body.details.field).toBe('parentId');
    expect((await post(owner, { parentId: thread.id, target: { scope: 'document' }, content: 'x' }).expect(400)).body.code).toBe('VALIDATION_ERROR');

    const list = await request(t.http).get(`${doc.path}/comments?rowId=r1&scope=row`).set(bearer(viewer)).expect(200);
    expect(list.body.payload.items[0].id).toBe(thread.id);
    expect(list.body.payload.items[0].replies.map((reply: { id: string }) => reply.id)).toEqual([first.id, second.id]);
    expect(list.body.payload.items.every((item: { target: { scope: string } }) => item.target.scope === 'row')).toBe(true);

    const all = await request(t.http).get(`${doc.path}/comments?pageSize=2`).set(bearer(viewer)).expect(200);
    expect(all.body.payload).toMatchObject({ page: 1, pageSize: 2, total: 5, totalPages: 3 });
    expect(all.body.payload.items[0].id).toBe(thread.id);
    const created = all.body.payload.items.map((item: { createdAt: string }) => item.createdAt);
    expect([...created].sort().reverse()).toEqual(created);
    const cells = await request(t.http).get(`${doc.path}/comments?fieldId=name`).set(bearer(viewer)).expect(200);
    expect(cells.body.payload.items.map((item: { content: string }) => item.content)).toEqual(['Typo']);
  });

  it('mentions readers (e-mail + comment_mentioned with displayName) and refuses outsiders', async () => {
    const res = await post(owner, { target: { scope: 'document' }, content: 'Please check @editor', mentions: [editor.id, viewer.id] }).expect(201);
    const comment = res.body.payload;
    expect(comment.mentions).toEqual([editor.id, viewer.id]);
    const mentioned = (await events(comment.id)).find((event) => event.event_type === 'comment_mentioned');
    expect(mentioned?.payload.mentions).toEqual([
      { id: editor.id, displayName: editor.displayName },
      { id: viewer.id, displayName: viewer.displayName },
    ]);
    const mails = await t.dataSource.query<{ recipient: string; kind: string }[]>(`SELECT recipient, kind FROM notifications WHERE kind = 'comment_mentioned' AND data->>'commentId' = $1 ORDER BY recipient`, [
      comment.id,
    ]);
    expect(mails.map((mail) => mail.recipient).sort()).toEqual([editor.email, viewer.email].sort());

    const before = await commentCount();
    const refused = await post(owner, { target: { scope: 'document' }, content: 'hi', mentions: [outsider.id] }).expect(400);
    expect(refused.body).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(refused.body.details.field).toBe('mentions');
    await post(owner, { target: { scope: 'document' }, content: 'hi', mentions: ['00000000-0000-4000-8000-000000000000'] }).expect(400);
    // A member the document's permissions settings do not let view it cannot be mentioned either.
    const narrowed = await createDocument(t.http, owner, { settings: { permissions: { view: ['role:editor'] } } });
    const hidden = await post(owner, { target: { scope: 'document' }, content: 'hi', mentions: [editor.id, viewer.id] }, narrowed.path).expect(400);
    expect(hidden.body.details).toMatchObject({ field: 'mentions', reason: `user ${viewer.id} cannot read this document` });
    expect(await commentCount()).toBe(before);

    // An edit that adds a mention notifies only the new person.
    await request(t.http).put(`${doc.path}/comments/${comment.id}`).set(bearer(owner)).send({ content: 'Edited', mentions: [editor.id, owner.id] }).expect(200);
    const mentionEvents = (await events(comment.id)).filter((event) => event.event_type === 'comment_mentioned');
    expect(mentionEvents[1]?.payload.mentions).toEqual([{ id: owner.id, displayName: owner.displayName }]);
  });

  it('reactions: one per person per emoji, {emoji, users, count}; emoji or short name; bad emoji refused', async () => {
    const comment = (await post(owner, { target: { scope: 'document' }, content: 'React' }).expect(201)).body.payload;
    const path = `${doc.path}/comments/${comment.id}/reactions`;
    await request(t.http).post(`${path}?emoji=${encodeURIComponent('👍')}`).set(bearer(owner)).expect(200);
    await request(t.http).post(path).set(bearer(editor)).send({ emoji: '👍' }).expect(200);
    await request(t.http).post(path).set(bearer(editor)).send({ emoji: '👍' }).expect(200);
    await request(t.http).post(path).set(bearer(editor)).send({ emoji: 'thumbsup' }).expect(200);
    const res = await request(t.http).post(`${path}?emoji=:thumbsup:`).set(bearer(owner)).expect(200);
    expect(res.body.payload.reactions).toEqual([
      { emoji: '👍', users: [owner.id, editor.id], count: 2 },
      { emoji: ':thumbsup:', users: [editor.id, owner.id], count: 2 },
    ]);
    for (const emoji of ['hello world', '👍👍', 'A', '<b>']) {
      const bad = await request(t.http).post(path).set(bearer(owner)).send({ emoji }).expect(400);
      expect(bad.body.code).toBe('VALIDATION_ERROR');
    }
    expect((await request(t.http).post(path).set(bearer(owner)).send({}).expect(400)).body.details.field).toBe('emoji');
    // Query and body naming different emoji: neither silently wins (the same one twice, in any form, is fine).
    const both = await request(t.http).post(`${path}?emoji=${encodeURIComponent('🎉')}`).set(bearer(owner)).send({ emoji: '👀' }).expect(400);
    expect(both.body.details).toMatchObject({ field: 'emoji' });
    const noParty = await request(t.http).get(`${doc.path}/comments/${comment.id}`).set(bearer(owner)).expect(200);
    expect(noParty.body.payload.reactions.map((reaction: { emoji: string }) => reaction.emoji)).toEqual(['👍', ':thumbsup:']);
    await request(t.http).post(`${path}?emoji=thumbsup`).set(bearer(owner)).send({ emoji: ':thumbsup:' }).expect(200);

    const removed = await request(t.http).delete(`${path}/${encodeURIComponent('👍')}`).set(bearer(editor)).expect(200);
    expect(removed.body.payload.reactions[0]).toEqual({ emoji: '👍', users: [owner.id], count: 1 });
    const byName = await request(t.http).delete(`${path}/thumbsup`).set(bearer(editor)).expect(200);
    expect(byName.body.payload.reactions[1]).toEqual({ emoji: ':thumbsup:', users: [owner.id], count: 1 });
    await request(t.http).delete(`${path}/${encodeURIComponent('not an emoji')}`).set(bearer(editor)).expect(400);
  });

  it('short names of 1–40 characters, with or without colons; the stored form removes the reaction; 41 is refused', async () => {
    const comment = (await post(owner, { target: { scope: 'document' }, content: 'Long names' }).expect(201)).body.payload;
    const path = `${doc.path}/comments/${comment.id}/reactions`;
    const forty = 'a'.repeat(40);
    await request(t.http).post(path).set(bearer(owner)).send({ emoji: forty }).expect(200);
    const again = await request(t.http).post(path).set(bearer(editor)).send({ emoji: `:${forty}:` }).expect(200);
    expect(again.body.payload.reactions).toEqual([{ emoji: `:${forty}:`, users: [owner.id, editor.id], count: 2 }]);
    // The form the answer shows names the reaction when removing it.
    const removed = await request(t.http).delete(`${path}/${encodeURIComponent(`:${forty}:`)}`).set(bearer(editor)).expect(200);
    expect(removed.body.payload.reactions).toEqual([{ emoji: `:${forty}:`, users: [owner.id], count: 1 }]);
    const tooLong = await request(t.http).post(path).set(bearer(owner)).send({ emoji: 'a'.repeat(41) }).expect(400);
    expect(tooLong.body.details.field).toBe('emoji');
    await request(t.http).post(path).set(bearer(owner)).send({ emoji: `:${'a'.repeat(41)}:` }).expect(400);
  });

  it('pin and resolve carry who and when; resolve raises comment_resolved; resolved filter', async () => {
    const comment = (await post(owner, { target: { scope: 'field', fieldId: 'qty' }, content: 'Pin me' }).expect(201)).body.payload;
    const base = `${doc.path}/comments/${comment.id}`;
    const pinned = (await request(t.http).post(`${base}/pin`).set(bearer(editor)).expect(200)).body.payload;
    expect(pinned).toMatchObject({ pinned: true, pinnedBy: editor.id });
    expect(Date.parse(pinned.pinnedAt)).not.toBeNaN();
    const again = (await request(t.http).post(`${base}/pin`).set(bearer(owner)).expect(200)).body.payload;
    expect(again).toMatchObject({ pinnedBy: editor.id, pinnedAt: pinned.pinnedAt });
    expect((await request(t.http).post(`${base}/unpin`).set(bearer(owner)).expect(200)).body.payload).toMatchObject({ pinned: false, pinnedBy: null, pinnedAt: null });

    const resolved = (await request(t.http).post(`${base}/resolve`).set(bearer(owner)).expect(200)).body.payload;
    expect(resolved).toMatchObject({ resolved: true, resolvedBy: owner.id });
    expect(Date.parse(resolved.resolvedAt)).not.toBeNaN();
    const resolvedEvent = (await events(comment.id)).find((event) => event.event_type === 'comment_resolved');
    expect(resolvedEvent?.payload).toMatchObject({ commentId: comment.id, resolvedBy: owner.id, target: { scope: 'field', fieldId: 'qty' } });
    const onlyResolved = await request(t.http).get(`${doc.path}/comments?resolved=true`).set(bearer(viewer)).expect(200);
    expect(onlyResolved.body.payload.items.map((item: { id: string }) => item.id)).toEqual([comment.id]);
    const open = await request(t.http).get(`${doc.path}/comments?resolved=false&pageSize=100`).set(bearer(viewer)).expect(200);
    expect(open.body.payload.items.map((item: { id: string }) => item.id)).not.toContain(comment.id);
    expect((await request(t.http).post(`${base}/unresolve`).set(bearer(owner)).expect(200)).body.payload).toMatchObject({ resolved: false, resolvedBy: null });
  });

  it('takes a comment as read back on PUT: its id must be the path\'s, the read-only keys are ignored', async () => {
    const comment = (await post(editor, { target: { scope: 'document' }, content: 'As read' }).expect(201)).body.payload;
    await post(owner, { parentId: comment.id, content: 'A reply' }).expect(201);
    const base = `${doc.path}/comments/${comment.id}`;
    const read = (await request(t.http).get(base).set(bearer(editor)).expect(200)).body.payload;
    expect(read.replies).toHaveLength(1);
    // Pinned and resolved change through their routes: sent back changed, they are ignored like the other read-only keys.
    const edited = await request(t.http).put(base).set(bearer(editor)).send({ ...read, content: 'Edited as read', resolved: true, pinned: true }).expect(200);
    expect(edited.body.payload).toMatchObject({ id: comment.id, content: 'Edited as read', resolved: false, pinned: false });
    const other = await request(t.http).put(base).set(bearer(editor)).send({ ...read, id: '00000000-0000-4000-8000-000000000000' }).expect(400);
    expect(problemsOf(other.body)).toEqual([expect.objectContaining({ field: 'id' })]);
    expect((await request(t.http).get(base).set(bearer(editor)).expect(200)).body.payload.content).toBe('Edited as read');
  });

  it('takes a comment as read back when someone it mentions lost access since: only newly mentioned people are checked', async () => {
    const narrowed = await createDocument(t.http, owner);
    const comment = (await post(editor, { target: { scope: 'document' }, content: 'Ask @viewer', mentions: [viewer.id] }, narrowed.path).expect(201)).body.payload;
    await request(t.http).put(`${narrowed.path}/settings`).set(bearer(owner)).send({ permissions: { view: ['role:editor'] } }).expect(200);
    const base = `${narrowed.path}/comments/${comment.id}`;
    const read = (await request(t.http).get(base).set(bearer(editor)).expect(200)).body.payload;
    const edited = await request(t.http).put(base).set(bearer(editor)).send({ ...read, content: 'Edited as read' }).expect(200);
    expect(edited.body.payload).toMatchObject({ content: 'Edited as read', mentions: [viewer.id] });
    // A new mention of someone who cannot read is still refused, and nothing changes.
    const refused = await request(t.http).put(base).set(bearer(editor)).send({ content: 'Again', mentions: [viewer.id, outsider.id] }).expect(400);
    expect(problemsOf(refused.body)).toEqual([expect.objectContaining({ field: 'mentions', reason: `user ${outsider.id} cannot read this document` })]);
    // Dropped, the person cannot be mentioned again.
    await request(t.http).put(base).set(bearer(editor)).send({ content: 'Dropped', mentions: [] }).expect(200);
    await request(t.http).put(base).set(bearer(editor)).send({ content: 'Back', mentions: [viewer.id] }).expect(400);
    expect((await request(t.http).get(base).set(bearer(editor)).expect(200)).body.payload).toMatchObject({ content: 'Dropped', mentions: [] });
    expect((await events(comment.id)).filter((event) => event.event_type === 'comment_mentioned')).toHaveLength(1);
  });

  it('only the author edits; author, workspace owner and org admins delete; replies go with the thread', async () => {
    const comment = (await post(editor, { target: { scope: 'document' }, content: 'Mine' }).expect(201)).body.payload;
    const reply = (await post(owner, { parentId: comment.id, content: 'Reply' }).expect(201)).body.payload;
    const base = `${doc.path}/comments/${comment.id}`;
    const refused = await request(t.http).put(base).set(bearer(owner)).send({ content: 'Hijack' }).expect(403);
    expect(refused.body.code).toBe('FORBIDDEN');
    const edited = await request(t.http).put(base).set(bearer(editor)).send({ content: 'Mine, edited' }).expect(200);
    expect(edited.body.payload).toMatchObject({ content: 'Mine, edited', updatedBy: editor.id });
    expect((await events(comment.id)).map((event) => event.event_type)).toEqual(['comment_created', 'comment_updated']);

    // Another editor may not delete it; the owner's reply may be deleted by its author only among editors.
    const editor2 = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor2, 'editor');
    expect((await request(t.http).delete(base).set(bearer(editor2)).expect(403)).body.code).toBe('FORBIDDEN');
    expect((await request(t.http).delete(`${doc.path}/comments/${reply.id}`).set(bearer(editor)).expect(403)).body.code).toBe('FORBIDDEN');
    const deleted = await request(t.http).delete(base).set(bearer(owner)).expect(200);
    expect(deleted.body.payload).toEqual({ id: comment.id, deleted: true, repliesDeleted: 1 });
    await request(t.http).get(base).set(bearer(owner)).expect(404);
    await request(t.http).get(`${doc.path}/comments/${reply.id}`).set(bearer(owner)).expect(404);
    expect((await events(comment.id)).map((event) => event.event_type)).toContain('comment_deleted');
    // The reply that went with its thread has its own comment_deleted.
    const replyDeleted = (await events(reply.id)).filter((event) => event.event_type === 'comment_deleted');
    expect(replyDeleted.map((event) => event.payload)).toEqual([
      expect.objectContaining({ commentId: reply.id, content: 'Reply', createdBy: owner.id, deletedBy: owner.id, deletedWithThread: comment.id }),
    ]);

    const own = (await post(editor, { target: { scope: 'document' }, content: 'Bye' }).expect(201)).body.payload;
    await request(t.http).delete(`${doc.path}/comments/${own.id}`).set(bearer(editor)).expect(200);
  });

  it("lets an editor left out of permissions.delete remove their own comment and reaction (that setting is about content)", async () => {
    const narrowed = await createDocument(t.http, owner, { settings: { permissions: { delete: [owner.id] } } });
    const mine = (await post(editor, { target: { scope: 'document' }, content: 'Mine' }, narrowed.path).expect(201)).body.payload;
    await request(t.http).post(`${narrowed.path}/comments/${mine.id}/reactions`).query({ emoji: '👍' }).set(bearer(editor)).expect(200);
    await request(t.http).delete(`${narrowed.path}/comments/${mine.id}/reactions/${encodeURIComponent('👍')}`).set(bearer(editor)).expect(200);
    await request(t.http).delete(`${narrowed.path}/comments/${mine.id}`).set(bearer(editor)).expect(200);
    // Document content stays under the setting: the same editor cannot delete a row.
    await createRow(t.http, owner, narrowed, { id: 'kept', values: { name: 'Kept' } });
    expect((await request(t.http).delete(`${narrowed.path}/data/kept`).set(bearer(editor)).expect(403)).body.code).toBe('FORBIDDEN');
  });

  it('refuses the viewer role, a missing comments:write scope, a foreign tenant and allowComment false', async () => {
    const before = await commentCount();
    expect((await post(viewer, { target: { scope: 'document' }, content: 'x' }).expect(403)).body.code).toBe('FORBIDDEN');
    const readOnly = await scopedToken(t, owner, ['doc:read', 'data:write']);
    expect((await post(readOnly, { target: { scope: 'document' }, content: 'x' }).expect(403)).body.code).toBe('FORBIDDEN');
    await request(t.http).get(`${doc.path}/comments`).set(bearer(readOnly)).expect(200);
    const writer = await scopedToken(t, owner, ['comments:write']);
    const viaScope = await post(writer, { target: { scope: 'document' }, content: 'scoped' }).expect(201);

    const foreign = await request(t.http).get(`${doc.path}/comments`).set(bearer(outsider)).expect(404);
    expect(foreign.body.code).toBe('DOC_NOT_FOUND');
    expect(foreign.body.payload?.items).toBeUndefined();
    await request(t.http).get(`${doc.path}/comments/${viaScope.body.payload.id}`).set(bearer(outsider)).expect(404);
    await post(outsider, { target: { scope: 'document' }, content: 'x' }).expect(404);
    // The outsider's own document with the same type and id answers like any document of theirs.
    const twin = await createDocument(t.http, outsider, { id: doc.docId });
    const theirs = await request(t.http).get(`${twin.path}/comments`).set(bearer(outsider)).expect(200);
    expect(theirs.body.payload.total).toBe(0);
    await request(t.http).get(`${doc.path}/comments/${viaScope.body.payload.id}`).set(bearer(outsider)).expect(404);

    const closed = await createDocument(t.http, owner, { settings: { permissions: { allowComment: false } } });
    const refused = await post(owner, { target: { scope: 'document' }, content: 'x' }, closed.path).expect(403);
    expect(refused.body.code).toBe('FORBIDDEN');
    await request(t.http).get(`${closed.path}/comments`).set(bearer(owner)).expect(200);
    expect(await commentCount()).toBe(before + 1);
  });

  it('keeps a comment whose row is deleted (targetDeleted) and links it again when the row comes back', async () => {
    await createRow(t.http, owner, doc, { id: 'gone', values: { name: 'Temp' } });
    const comment = (await post(owner, { target: { scope: 'cell', rowId: 'gone', fieldId: 'name' }, content: 'On a row' }).expect(201)).body.payload;
    await request(t.http).delete(`${doc.path}/data/gone`).set(bearer(owner)).expect(200);
    const after = await request(t.http).get(`${doc.path}/comments/${comment.id}`).set(bearer(owner)).expect(200);
    expect(after.body.payload).toMatchObject({ content: 'On a row', targetDeleted: true, target: { scope: 'cell', rowId: 'gone', fieldId: 'name' } });
    const listed = await request(t.http).get(`${doc.path}/comments?rowId=gone`).set(bearer(owner)).expect(200);
    expect(listed.body.payload.items[0]).toMatchObject({ id: comment.id, targetDeleted: true });
    await createRow(t.http, owner, doc, { id: 'gone', values: { name: 'Back' } });
    const restored = await request(t.http).get(`${doc.path}/comments/${comment.id}`).set(bearer(owner)).expect(200);
    expect(restored.body.payload.targetDeleted).toBe(false);
  });

  it('fills the bundle comments section, honouring commentsLimit', async () => {
    const res = await request(t.http).get(`${doc.path}?include=comments&commentsLimit=2`).set(bearer(viewer)).expect(200);
    expect(res.body.payload.comments).toHaveLength(2);
    const listed = await request(t.http).get(`${doc.path}/comments?pageSize=2`).set(bearer(viewer)).expect(200);
    expect(res.body.payload.comments.map((item: { id: string }) => item.id)).toEqual(listed.body.payload.items.map((item: { id: string }) => item.id));
    const none = await request(t.http).get(`${doc.path}?include=comments&commentsLimit=0`).set(bearer(viewer)).expect(200);
    expect(none.body.payload.comments).toEqual([]);
  });
});
