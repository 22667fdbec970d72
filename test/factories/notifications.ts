import type { DataSource } from 'typeorm';

export interface RecordedMessage {
  channel: string;
  recipient: string;
  kind: string;
  subject: string;
  body: string;
  data: Record<string, unknown>;
}

/** The newest message the notifier recorded for `recipient` (optionally of one kind). */
export async function lastMessageTo(dataSource: DataSource, recipient: string, kind?: string): Promise<RecordedMessage | undefined> {
  const rows = await dataSource.query<RecordedMessage[]>(
    `SELECT channel, recipient, kind, subject, body, data FROM notifications
      WHERE lower(recipient) = lower($1) AND ($2::text IS NULL OR kind = $2)
      ORDER BY created_at DESC LIMIT 1`,
    [recipient, kind ?? null],
  );
  return rows[0];
}
