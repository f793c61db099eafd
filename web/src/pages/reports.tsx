import { useState, type FormEvent } from 'react';
import { unwrap } from '../api/client';
import { ErrorBox } from '../components/error-box';
import { CheckField, TextField } from '../components/field';
import { useSession } from '../session';

/**
 * The Master Report: one CSV row per call, one column per insight parameter (`analysis.<name>`).
 * The page asks the API for a signed link valid for a minute (with the bearer token), then lets
 * the browser download it natively: the CSV streams to a file with the browser's own progress,
 * however large, and nothing is held in the page.
 */
export function ReportsPage({ clientId }: { clientId: string }) {
  const { api } = useSession();
  const [form, setForm] = useState({ from: '', to: '', campaign: '', bom: true, formulaGuard: true });
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<string>();

  const download = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setDone(undefined);
    const query = {
      ...(form.from ? { from: form.from } : {}),
      ...(form.to ? { to: form.to } : {}),
      ...(form.campaign ? { campaign: form.campaign } : {}),
      ...(form.bom ? { bom: true } : {}),
      ...(form.formulaGuard ? { formulaGuard: true } : {}),
    };
    try {
      const link = unwrap(await api.POST('/v1/tenants/{clientId}/reports/master.csv/links', { params: { path: { clientId }, query } }));
      const a = document.createElement('a');
      a.href = link.url;
      a.download = '';
      document.body.append(a);
      a.click();
      a.remove();
      setDone(`Download started: ${link.calls.toLocaleString()} ${link.calls === 1 ? 'call' : 'calls'}. Your browser shows its progress in its downloads.`);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <h1>Reports</h1>
      <form className="panel" onSubmit={download} aria-labelledby="master-title">
        <h2 id="master-title">Master Report</h2>
        <p className="muted">Every call with its outcome, disposition and one column per post-call insight.</p>
        <div className="row wrap">
          <TextField label="From (YYYY-MM-DD or instant)" value={form.from} onChange={(e) => setForm({ ...form, from: e.target.value })} />
          <TextField label="To (YYYY-MM-DD or instant)" value={form.to} onChange={(e) => setForm({ ...form, to: e.target.value })} />
          <TextField label="Campaign id" value={form.campaign} onChange={(e) => setForm({ ...form, campaign: e.target.value })} />
        </div>
        <CheckField label="Byte order mark (for Excel)" checked={form.bom} onChange={(e) => setForm({ ...form, bom: e.target.checked })} />
        <CheckField label="Guard against spreadsheet formulas" checked={form.formulaGuard} onChange={(e) => setForm({ ...form, formulaGuard: e.target.checked })} />
        <ErrorBox error={error} title="The report was refused" />
        {done ? (
          <p className="notice" role="status">
            {done}
          </p>
        ) : null}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Starting the download…' : 'Download Master Report (CSV)'}
        </button>
      </form>
    </>
  );
}
