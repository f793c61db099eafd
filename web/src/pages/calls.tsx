import { useEffect, useRef, useState } from 'react';
import { ApiError, unwrap } from '../api/client';
import { liveStatus } from '../calls/live-status';
import { useCallPages } from '../calls/use-call-pages';
import { ErrorBox } from '../components/error-box';
import { issueAt, SelectField, TextField } from '../components/field';
import { Link } from '../router';
import { useSession } from '../session';

/** The sorts the API offers, as one choice: `sort` and `order`. */
const sorts = [
  ['startedAt:desc', 'Newest first'],
  ['startedAt:asc', 'Oldest first'],
  ['duration:desc', 'Longest first'],
  ['duration:asc', 'Shortest first'],
] as const;

/** End reasons a record holds (docs/api.md, Call records); the field takes any other too. */
const endReasons = ['closed', 'callerHangup', 'transferred', 'voicemail', 'silenceTimeout', 'maxDuration', 'mediaTimeout', 'exitNotConnected', 'error'];

const emptyFilters = { number: '', direction: '', outcome: '', disposition: '', endReason: '', from: '', to: '', sort: 'startedAt:desc' };
type Filters = typeof emptyFilters;

/** The API's query for the filters: empty fields are left out, so the API's defaults apply. */
function toQuery(f: Filters): Record<string, unknown> {
  const [sort, order] = f.sort.split(':');
  return {
    sort,
    order,
    ...(f.number.trim() ? { number: f.number.trim() } : {}),
    ...(f.direction ? { direction: [f.direction] } : {}),
    ...(f.outcome ? { outcome: [f.outcome] } : {}),
    ...(f.disposition.trim() ? { disposition: [f.disposition.trim()] } : {}),
    ...(f.endReason.trim() ? { endReason: [f.endReason.trim()] } : {}),
    ...(f.from ? { from: f.from } : {}),
    ...(f.to ? { to: f.to } : {}),
  };
}

/**
 * Calls, newest first, one page of 50 at a time with Newer / Older (the API's two cursors), sorted
 * by time or duration and filtered by number, direction, outcome, disposition, end reason and
 * dates. Typed filters apply after a pause in typing. Calls still in progress or being analysed
 * are read again every 2 s (one GET each) until their state is final.
 */
export function CallsPage({ clientId }: { clientId: string }) {
  const { api } = useSession();
  const [filters, setFilters] = useState<Filters>(emptyFilters);
  const [applied, setApplied] = useState<Filters>(emptyFilters);
  useEffect(() => {
    const timer = setTimeout(() => setApplied(filters), 350);
    return () => clearTimeout(timer);
  }, [filters]);
  const list = useCallPages(api, clientId, toQuery(applied));
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
            live.current.replace(id, call);
          },
          () => undefined,
        );
      }
    }, 2000);
    return () => clearInterval(timer);
  }, [api, clientId, pending]);

  const set = (name: keyof Filters) => (event: { target: { value: string } }) => setFilters({ ...filters, [name]: event.target.value });
  const issues = list.error instanceof ApiError ? (list.error.body.issues ?? []) : [];
  const base = `/t/${encodeURIComponent(clientId)}/calls`;
  const pager = (
    <div className="row pager">
      <button type="button" onClick={list.prev} disabled={!list.hasNewer || list.loading}>
        ← Newer
      </button>
      <button type="button" onClick={list.next} disabled={!list.hasOlder || list.loading}>
        Older →
      </button>
    </div>
  );
  return (
    <>
      <header className="row">
        <h1>Calls</h1>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </header>
      <form className="row wrap filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <SelectField label="Sort" value={filters.sort} onChange={set('sort')} options={sorts} />
        <TextField label="Number" value={filters.number} onChange={set('number')} placeholder="+919800001234" inputMode="tel" issue={issueAt(issues, 'number')} />
        <SelectField label="Direction" value={filters.direction} onChange={set('direction')} options={[['', 'All'], ['inbound', 'Inbound'], ['outbound', 'Outbound'], ['web', 'Web'], ['simulation', 'Simulation']]} />
        <SelectField label="Outcome" value={filters.outcome} onChange={set('outcome')} options={[['', 'All'], ['completed', 'Completed'], ['busy', 'Busy'], ['no_answer', 'No answer'], ['failed', 'Failed'], ['canceled', 'Canceled']]} />
        <TextField label="Disposition" value={filters.disposition} onChange={set('disposition')} placeholder="promise_to_pay" issue={issueAt(issues, 'disposition')} />
        <TextField label="End reason" value={filters.endReason} onChange={set('endReason')} list="end-reasons" placeholder="transferred" issue={issueAt(issues, 'endReason')} />
        <datalist id="end-reasons">
          {endReasons.map((r) => (
            <option key={r} value={r} />
          ))}
        </datalist>
        <TextField label="From" type="date" value={filters.from} onChange={set('from')} issue={issueAt(issues, 'from')} />
        <TextField label="To (through)" type="date" value={filters.to} onChange={set('to')} issue={issueAt(issues, 'to')} />
        <button type="button" onClick={() => setFilters(emptyFilters)}>
          Clear filters
        </button>
      </form>
      <ErrorBox error={list.error} title="Could not load calls" />
      <table className="calls">
        <caption className="sr-only">Calls</caption>
        <thead>
          <tr>
            <th scope="col">Started</th>
            <th scope="col">Direction</th>
            <th scope="col">Number</th>
            <th scope="col">Other party</th>
            <th scope="col">Duration</th>
            <th scope="col">Disposition</th>
            <th scope="col">End reason</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {list.items.map((c) => {
            const s = liveStatus(c);
            return (
              <tr key={c.id} data-call={c.id}>
                <td data-label="Started">
                  <Link href={`${base}/${c.id}`}>{new Date(c.startedAt).toLocaleString()}</Link>
                </td>
                <td data-label="Direction">{c.direction}</td>
                <td data-label="Number">{c.phoneNumber ?? '—'}</td>
                <td data-label="Other party">{c.contactNumber ?? '—'}</td>
                <td data-label="Duration">{c.durationSeconds ?? '—'} s</td>
                <td data-label="Disposition">{c.disposition ?? '—'}</td>
                <td data-label="End reason">{c.endReason ?? '—'}</td>
                <td data-label="Status">
                  <span className={s.final ? 'badge done' : 'badge live'}>{s.text}</span>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <div className="page-footer">
        <p aria-live="polite" className="muted" data-testid="calls-status">
          {list.loading ? 'Loading calls…' : list.items.length === 0 ? 'No calls match.' : `Page ${list.page}: ${list.items.length} ${list.items.length === 1 ? 'call' : 'calls'}`}
        </p>
        {pager}
      </div>
    </>
  );
}
