import { useEffect, useState } from 'react';
import { unwrap, type Schemas } from '../api/client';
import { liveStatus } from '../calls/live-status';
import { RecordingPlayer } from '../calls/recording-player';
import { ErrorBox } from '../components/error-box';
import { Link } from '../router';
import { useSession } from '../session';

type CallDetail = Schemas['CallDetail'];

/** One call: live status until insights land, transcript, stereo recording, insights, path. */
export function CallDetailPage({ clientId, callId }: { clientId: string; callId: string }) {
  const { api } = useSession();
  const [call, setCall] = useState<CallDetail>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        const found = unwrap(await api.GET('/v1/tenants/{clientId}/calls/{id}', { params: { path: { clientId, id: callId } } }));
        if (stopped) return;
        setCall(found);
        setError(undefined);
        if (liveStatus(found).final) return;
      } catch (failure) {
        if (stopped) return;
        setError(failure);
      }
      timer = setTimeout(poll, 2000);
    };
    void poll();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }, [api, clientId, callId]);

  if (!call) return error ? <ErrorBox error={error} title="Could not load the call" /> : <p aria-live="polite">Loading the call…</p>;
  const s = liveStatus(call);
  const insights = Object.entries(call.analysis.insights ?? {});
  const variables = Object.entries(call.variables);
  // The run's last step says how the run saw the end (a hang-up, say); the record's end reason
  // is the platform's word for it (transferred, silenceTimeout, ...), and the one shown.
  const lastEnded = call.steps.map((s) => s.end !== undefined).lastIndexOf(true);
  return (
    <>
      <h1>
        <Link href={`/t/${encodeURIComponent(clientId)}/calls`}>Calls</Link> / {call.direction} call {call.contactNumber ? `with ${call.contactNumber}` : ''}
      </h1>
      <ErrorBox error={error} title="Could not refresh the call" />
      <p role="status" aria-live="polite">
        <span className={s.final ? 'badge done' : 'badge live'} data-testid="call-status">
          {s.text}
        </span>
      </p>
      <dl className="facts">
        <dt>Started</dt>
        <dd>{new Date(call.startedAt).toLocaleString()}</dd>
        <dt>Duration</dt>
        <dd>{call.durationSeconds ?? '—'} s</dd>
        <dt>Outcome</dt>
        <dd>{call.outcome ?? '—'}</dd>
        <dt>End reason</dt>
        <dd>{call.endReason ?? '—'}</dd>
        <dt>Disposition</dt>
        <dd data-testid="disposition">{call.disposition ?? '—'}</dd>
        <dt>Language</dt>
        <dd>{call.language ?? '—'}</dd>
      </dl>
      <section aria-labelledby="sip-title">
        <h2 id="sip-title">SIP</h2>
        <dl className="facts" data-testid="sip-facts">
          <dt>Call-ID</dt>
          <dd>
            <code>{call.sipCallId ?? '—'}</code>
          </dd>
          <dt>Final status</dt>
          <dd>{call.sipStatus ?? '—'}</dd>
          <dt>Remote address</dt>
          <dd>{call.sip.remoteAddress ? `${call.sip.remoteAddress}${call.sip.transport ? ` (${call.sip.transport.toUpperCase()})` : ''}` : '—'}</dd>
          <dt>Codec</dt>
          <dd>{call.sip.codec ?? '—'}</dd>
        </dl>
      </section>
      <section aria-labelledby="variables-title">
        <h2 id="variables-title">Variables</h2>
        {variables.length > 0 ? (
          <table data-testid="variables">
            <caption className="sr-only">Variables captured by the recipe</caption>
            <tbody>
              {variables.map(([name, value]) => (
                <tr key={name}>
                  <th scope="row">{name}</th>
                  <td>{typeof value === 'string' ? value : JSON.stringify(value)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p className="muted">No variables were captured.</p>
        )}
      </section>
      <section aria-labelledby="insights-title">
        <h2 id="insights-title">Insights</h2>
        {call.analysis.status === 'completed' ? (
          insights.length > 0 ? (
            <table data-testid="insights">
              <caption className="sr-only">Insights</caption>
              <tbody>
                {insights.map(([name, value]) => (
                  <tr key={name}>
                    <th scope="row">{name}</th>
                    <td>{value === null ? '—' : String(value)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p>The recipe defines no insight parameters.</p>
          )
        ) : (
          <p className="muted">{call.analysis.status === 'failed' ? `Analysis failed: ${call.analysis.error ?? ''}` : s.text}</p>
        )}
      </section>
      <section aria-labelledby="recording-title">
        <h2 id="recording-title">Recording</h2>
        {call.recording && call.status === 'ended' ? <RecordingPlayer url={call.recording.url} /> : <p className="muted">{call.status === 'ended' ? 'No recording.' : 'Available when the call ends.'}</p>}
      </section>
      <section aria-labelledby="transcript-title">
        <h2 id="transcript-title">Transcript</h2>
        <ol className="transcript" data-testid="transcript">
          {call.transcript.map((line, i) => (
            <li key={i} className={line.speaker}>
              <strong>{line.speaker === 'agent' ? 'Agent' : 'Caller'}:</strong>{' '}
              {line.dtmf ? (
                <span className="badge keyed" title="Entered on the keypad (DTMF)">
                  ⌨ Keyed
                </span>
              ) : null}{' '}
              {line.text}
              {line.interrupted ? <span className="badge">Interrupted</span> : null}
            </li>
          ))}
        </ol>
        {call.transcript.length === 0 ? <p className="muted">No transcript.</p> : null}
      </section>
      <section aria-labelledby="steps-title">
        <h2 id="steps-title">Path through the recipe</h2>
        <ol>
          {call.steps.map((step, i) => (
            <li key={i}>
              <code>{step.blockId}</code> ({step.type}){step.exit ? ` → ${step.exit}` : ''}
              {step.end ? ` (${i === lastEnded ? (call.endReason ?? step.end) : step.end})` : ''}
            </li>
          ))}
        </ol>
      </section>
    </>
  );
}
