import { useEffect, useRef, useState, type FormEvent } from 'react';
import { unwrap } from '../api/client';
import { ErrorBox } from '../components/error-box';
import { SelectField } from '../components/field';
import { useNames } from '../components/use-options';
import { useSession } from '../session';
import { Link } from '../router';
import { WebPhone, WebSocketUnreachable, type PhoneState } from '../webcall/web-phone';

const stateText: Record<PhoneState, string> = {
  idle: 'Ready',
  connecting: 'Connecting…',
  ringing: 'Ringing…',
  'in-call': 'In call',
  ended: 'Call ended',
  failed: 'Call failed',
};

/**
 * "Call this agent": a call from this browser, with its microphone and speaker, to one of the
 * tenant's numbers (its recipe and settings) or to a recipe directly. The management API issues a
 * one-call token; sip.js places the call over SIP/WSS.
 */
export function WebCallPage({ clientId }: { clientId: string }) {
  const { api } = useSession();
  const numbers = useNames(clientId, 'phone-numbers');
  const recipes = useNames(clientId, 'recipes');
  const [target, setTarget] = useState('');
  const [state, setState] = useState<PhoneState>('idle');
  const [detail, setDetail] = useState<string>();
  const [error, setError] = useState<unknown>();
  const phone = useRef<WebPhone | undefined>(undefined);
  const audio = useRef<HTMLAudioElement>(null);
  const [record, setRecord] = useState<{ state: 'looking' } | { state: 'found'; id: string } | { state: 'missing' }>();
  useEffect(() => () => void phone.current?.hangUp(), []);

  // After the call: the record is written at hang-up; find it by the INVITE's Call-ID, asking
  // once a second for up to 20 s.
  useEffect(() => {
    const sipCallId = phone.current?.sipCallId;
    if (state !== 'ended' || !sipCallId) return undefined;
    let stopped = false;
    setRecord({ state: 'looking' });
    void (async () => {
      for (let i = 0; i < 20 && !stopped; i++) {
        const found = await api.GET('/v1/tenants/{clientId}/calls', { params: { path: { clientId }, query: { sipCallId, limit: 1 } } }).then(
          (r) => unwrap(r).items[0],
          () => undefined,
        );
        if (stopped) return;
        if (found && found.status === 'ended') return setRecord({ state: 'found', id: found.id });
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      if (!stopped) setRecord({ state: 'missing' });
    })();
    return () => {
      stopped = true;
    };
  }, [api, clientId, state]);

  const busy = state === 'connecting' || state === 'ringing' || state === 'in-call';
  const call = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    setDetail(undefined);
    setRecord(undefined);
    const [kind, name] = [target.slice(0, target.indexOf(':')), target.slice(target.indexOf(':') + 1)];
    try {
      const body = kind === 'number' ? { phoneNumber: name } : { recipe: name };
      const ticket = unwrap(await api.POST('/v1/tenants/{clientId}/web-calls', { params: { path: { clientId } }, body }));
      phone.current = new WebPhone({
        onState: (next, why) => {
          setState(next);
          if (why) setDetail(why);
        },
        onRemoteStream: (stream) => {
          if (audio.current) {
            audio.current.srcObject = stream;
            void audio.current.play().catch(() => undefined);
          }
        },
      });
      await phone.current.call(ticket);
    } catch (failure) {
      setState('failed');
      setError(failure);
    }
  };

  return (
    <>
      <h1>Web call</h1>
      <p className="muted">Talk to an agent from this browser, with your microphone and speaker. The call is recorded like a phone call (direction web).</p>
      <form className="panel" onSubmit={call} aria-labelledby="call-title">
        <h2 id="call-title">Call this agent</h2>
        <SelectField
          label="Agent to call"
          value={target}
          onChange={(e) => setTarget(e.target.value)}
          options={[
            ['', '— choose a number or a recipe —'] as const,
            ...numbers.names.map((n) => [`number:${n}`, `Number ${n}`] as const),
            ...recipes.names.map((n) => [`recipe:${n}`, `Recipe ${n}`] as const),
          ]}
        />
        <div className="row">
          <button type="submit" className="primary" disabled={busy || target === ''}>
            Call this agent
          </button>
          <button type="button" className="danger" disabled={!busy} onClick={() => void phone.current?.hangUp()}>
            Hang up
          </button>
        </div>
        <p role="status" aria-live="polite" data-testid="web-call-state">
          {stateText[state]}
          {detail ? `: ${detail}` : ''}
        </p>
        {error instanceof WebSocketUnreachable ? (
          <div className="error" role="alert" data-testid="certificate-hint">
            <strong>Could not connect to the platform's SIP WebSocket</strong> (<code>{error.websocketUrl}</code>): {error.message}
            <p>
              Usually the browser refused the gateway's certificate (the one it generates for itself is not trusted until you accept it).
              {error.certificatePage ? (
                <>
                  {' '}
                  Open{' '}
                  <a href={error.certificatePage} target="_blank" rel="noreferrer">
                    {error.certificatePage}
                  </a>{' '}
                  in a new tab, accept the certificate there, then come back and call again.
                </>
              ) : null}{' '}
              If that does not help, check that the gateway runs and that its WSS port is reachable from this computer.
            </p>
          </div>
        ) : (
          <ErrorBox error={error} title="The call could not be placed" />
        )}
        {record ? (
          <p role="status" aria-live="polite" data-testid="call-record">
            {record.state === 'found' ? (
              <Link href={`/t/${encodeURIComponent(clientId)}/calls/${record.id}`}>Open the call record</Link>
            ) : record.state === 'looking' ? (
              'Saving the call record…'
            ) : (
              <>
                The call record did not appear yet: see <Link href={`/t/${encodeURIComponent(clientId)}/calls`}>Calls</Link>.
              </>
            )}
          </p>
        ) : null}
        <audio ref={audio} autoPlay aria-label="Agent audio" />
      </form>
    </>
  );
}
