import { useState, type FormEvent } from 'react';
import { fetchBlob } from '../api/client';
import { ErrorBox } from '../components/error-box';
import { CheckField, TextField } from '../components/field';
import { useSession } from '../session';

/**
 * The Master Report: one CSV row per call, one column per insight parameter (`analysis.<name>`).
 * Downloaded with the bearer token (a plain link cannot send it), then saved by the browser.
 */
export function ReportsPage({ clientId }: { clientId: string }) {
  const { token } = useSession();
  const [form, setForm] = useState({ from: '', to: '', campaign: '', bom: true, formulaGuard: true });
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<string>();

  const download = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setDone(undefined);
    const query = new URLSearchParams();
    if (form.from) query.set('from', form.from);
    if (form.to) query.set('to', form.to);
    if (form.campaign) query.set('campaign', form.campaign);
    if (form.bom) query.set('bom', 'true');
    if (form.formulaGuard) query.set('formulaGuard', 'true');
    try {
      const blob = await fetchBlob(token, `/v1/tenants/${encodeURIComponent(clientId)}/reports/master.csv?${query.toString()}`);
      const url = URL.createObjectURL(blob);
      const a = document.createElement('a');
      a.href = url;
      a.download = `master-report-${clientId}.csv`;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      setDone(`Downloaded ${blob.size.toLocaleString()} bytes.`);
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
          {busy ? 'Preparing…' : 'Download Master Report (CSV)'}
        </button>
      </form>
    </>
  );
}
