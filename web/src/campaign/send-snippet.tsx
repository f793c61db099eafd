import { useEffect, useState } from 'react';
import { unwrap } from '../api/client';
import { ErrorBox } from '../components/error-box';
import { useSession } from '../session';

/** `YYYY-MM-DDT10:30:00` of the day after `now` (the browser's calendar). */
export function tomorrowAt1030(now: Date): string {
  const day = new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${day.getFullYear()}-${pad(day.getMonth() + 1)}-${pad(day.getDate())}T10:30:00`;
}

/** The SendMessage request for a campaign, with the tenant's own URL, ready to copy. */
export function SendMessageSnippet({ clientId, campaignId }: { clientId: string; campaignId: string }) {
  const { api } = useSession();
  const [url, setUrl] = useState<string>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    api.GET('/v1/tenants/{clientId}/endpoints', { params: { path: { clientId } } }).then((r) => setUrl(unwrap(r).sendMessageUrl), setError);
  }, [api, clientId]);
  if (error) return <ErrorBox error={error} title="Could not read the tenant's address" />;
  if (!url) return null;
  // ScheduledAt.Time without an offset is read in the tenant's timezone: the example says tomorrow
  // at 10:30, so a copied snippet schedules a call instead of ringing at once.
  const body = { CampaignID: campaignId, To: { PhoneNumber: '919876543210' }, Variables: { name: 'Asha' }, ScheduledAt: { Time: tomorrowAt1030(new Date()) } };
  const snippet = [
    `curl -s -X POST '${url}' \\`,
    `  -H 'Authorization: <campaign token>' -H 'Content-Type: application/json' \\`,
    `  -d '${JSON.stringify(body)}'`,
  ].join('\n');
  return (
    <section aria-labelledby="snippet-title">
      <h3 id="snippet-title">SendMessage</h3>
      <p className="muted">Issue a token with the campaign scope under API tokens, then send:</p>
      <pre className="snippet" data-testid="send-message-snippet" tabIndex={0}>
        {snippet}
      </pre>
      <button type="button" onClick={() => void navigator.clipboard?.writeText(snippet)}>
        Copy snippet
      </button>
    </section>
  );
}
