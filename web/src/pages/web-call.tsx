import { useEffect, useRef, useState, type FormEvent } from 'react';
import { unwrap } from '../api/client';
import { ErrorBox } from '../components/error-box';
import { SelectField } from '../components/field';
import { useNames } from '../components/use-options';
import { useSession } from '../session';
import { WebPhone, type PhoneState } from '../webcall/web-phone';

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
  useEffect(() => () => void phone.current?.hangUp(), []);

  const busy = state === 'connecting' || state === 'ringing' || state === 'in-call';
  const call = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    setDetail(undefined);
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
        <ErrorBox error={error} title="The call could not be placed" />
        <audio ref={audio} autoPlay aria-label="Agent audio" />
      </form>
    </>
  );
}
