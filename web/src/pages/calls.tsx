import { useEffect, useRef, useState } from 'react';
import { unwrap } from '../api/client';
import { liveStatus } from '../calls/live-status';
import { SelectField, TextField } from '../components/field';
import { PageFooter, usePaged } from '../components/paged';
import { Link } from '../router';
import { useSession } from '../session';

type Direction = 'inbound' | 'outbound' | 'simulation' | 'web';
type Outcome = 'completed' | 'busy' | 'no_answer' | 'failed' | 'canceled';

/**
 * Calls, oldest first as the API pages them, with a live status: calls still in progress or being
 * analysed are read again every 2 s (one GET each) until their state is final.
 */
export function CallsPage({ clientId }: { clientId: string }) {
  const { api } = useSession();
  const [direction, setDirection] = useState('');
  const [outcome, setOutcome] = useState('');
  const [from, setFrom] = useState('');
  const query = {
    ...(direction ? { direction: [direction as Direction] } : {}),
    ...(outcome ? { outcome: [outcome as Outcome] } : {}),
    ...(from ? { from } : {}),
  };
  const list = usePaged(
    async (cursor) => unwrap(await api.GET('/v1/tenants/{clientId}/calls', { params: { path: { clientId }, query: { limit: 50, ...query, ...(cursor ? { cursor } : {}) } as never } })),
    `${clientId}:${JSON.stringify(query)}`,
  );
  const live = useRef(list);
  live.current = list;
  const pending = list.items.filter((c) => !liveStatus(c).final).map((c) => c.id).join(',');
  useEffect(() => {
    if (!pending) return undefined;
    const timer = setInterval(() => {
      for (const id of pending.split(',')) {
        api.GET('/v1/tenants/{clientId}/calls/{id}', { params: { path: { clientId, id } } }).then(
          (r) => {
            const { transcript: _t, steps: _s, ...call } = unwrap(r);
            live.current.replace((c) => c.id === id, call);
          },
          () => undefined,
        );
      }
    }, 2000);
    return () => clearInterval(timer);
  }, [api, clientId, pending]);

  return (
    <>
      <header className="row">
        <h1>Calls</h1>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </header>
      <form className="row wrap" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <SelectField label="Direction" value={direction} onChange={(e) => setDirection(e.target.value)} options={[['', 'All'], ['inbound', 'Inbound'], ['outbound', 'Outbound'], ['web', 'Web'], ['simulation', 'Simulation']]} />
        <SelectField label="Outcome" value={outcome} onChange={(e) => setOutcome(e.target.value)} options={[['', 'All'], ['completed', 'Completed'], ['busy', 'Busy'], ['no_answer', 'No answer'], ['failed', 'Failed'], ['canceled', 'Canceled']]} />
        <TextField label="From (YYYY-MM-DD)" value={from} onChange={(e) => setFrom(e.target.value)} placeholder="2026-03-01" />
      </form>
      <table>
        <caption className="sr-only">Calls</caption>
        <thead>
          <tr>
            <th scope="col">Started</th>
            <th scope="col">Direction</th>
            <th scope="col">Number</th>
            <th scope="col">Other party</th>
            <th scope="col">Duration</th>
            <th scope="col">Disposition</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {list.items.map((c) => {
            const s = liveStatus(c);
            return (
              <tr key={c.id} data-call={c.id}>
                <td>
                  <Link href={`/t/${encodeURIComponent(clientId)}/calls/${c.id}`}>{new Date(c.startedAt).toLocaleString()}</Link>
                </td>
                <td>{c.direction}</td>
                <td>{c.phoneNumber ?? '—'}</td>
                <td>{c.contactNumber ?? '—'}</td>
                <td>{c.durationSeconds ?? '—'} s</td>
                <td>{c.disposition ?? '—'}</td>
                <td>
                  <span className={s.final ? 'badge done' : 'badge live'}>{s.text}</span>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <PageFooter list={list} noun="calls" />
    </>
  );
}
