import { useEffect, useState, type FormEvent } from 'react';
import { unwrap, type Schemas } from '../api/client';
import { ErrorBox } from '../components/error-box';
import { TextField } from '../components/field';
import { Link } from '../router';
import { useSession } from '../session';

type MessageStatus = Schemas['MessageStatus'];

/**
 * Follows one SendMessage `message_id` (GET .../messages/{messageId}) every 1.5 s until it is final:
 * scheduled, ringing, answered, completed (or busy, no answer, failed), with each attempt's call.
 */
export function MessageTracker({ clientId, campaignId }: { clientId: string; campaignId: string }) {
  const { api } = useSession();
  const [input, setInput] = useState('');
  const [messageId, setMessageId] = useState<string>();
  const [status, setStatus] = useState<MessageStatus>();
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    if (!messageId) return undefined;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        const found = unwrap(await api.GET('/v1/tenants/{clientId}/campaigns/{campaignId}/messages/{messageId}', { params: { path: { clientId, campaignId, messageId } } }));
        if (stopped) return;
        setStatus(found);
        setError(undefined);
        const lastCall = found.attempts.at(-1)?.callId;
        if (found.final && lastCall !== undefined) return;
      } catch (failure) {
        if (stopped) return;
        setError(failure);
      }
      timer = setTimeout(poll, 1500);
    };
    void poll();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }, [api, clientId, campaignId, messageId]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setStatus(undefined);
    setMessageId(input.trim());
  };
  const live = status?.attempts.at(-1)?.status ?? status?.status;
  return (
    <section className="panel" aria-labelledby="tracker-title">
      <h3 id="tracker-title">Follow a message</h3>
      <form className="row wrap" onSubmit={submit}>
        <TextField label="message_id" value={input} onChange={(e) => setInput(e.target.value)} />
        <button type="submit">Follow</button>
      </form>
      <ErrorBox error={error} title="Could not read the message" />
      {status ? (
        <>
          <p role="status" aria-live="polite">
            Message to {status.to}: <strong data-testid="message-status">{live}</strong>
            {status.final ? ' (final)' : ''}
          </p>
          <table>
            <caption className="sr-only">Attempts</caption>
            <thead>
              <tr>
                <th scope="col">Attempt</th>
                <th scope="col">Status</th>
                <th scope="col">SIP</th>
                <th scope="col">Call</th>
              </tr>
            </thead>
            <tbody>
              {status.attempts.map((a) => (
                <tr key={a.attempt}>
                  <td>{a.attempt}</td>
                  <td>{a.status}</td>
                  <td>{a.sipStatus ?? '—'}</td>
                  <td>{a.callId ? <Link href={`/t/${encodeURIComponent(clientId)}/calls/${a.callId}`}>Open call</Link> : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
    </section>
  );
}
