import { useState, type FormEvent } from 'react';
import { ApiError, managementClient, unwrap } from '../api/client';
import { ErrorBox } from '../components/error-box';
import { TextField } from '../components/field';
import { navigate } from '../router';
import { useSessionState } from '../session';

/** Sign in with a tenant's management token, or the operator token (then pick a tenant). */
export function SignInPage() {
  const { signIn, notice } = useSessionState();
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const who = unwrap(await managementClient(token.trim(), () => undefined).GET('/v1/whoami'));
      signIn(token.trim(), who);
      navigate(who.kind === 'operator' ? '/tenants' : `/t/${encodeURIComponent(who.clientId)}/recipes`, true);
    } catch (failure) {
      // The API speaks to programs ("send Authorization: Bearer <token>"); a person typed a token.
      setError(
        failure instanceof ApiError && failure.status === 401
          ? new ApiError(401, { code: failure.body.code, message: 'That token was not accepted. Check that it is complete, not revoked or expired, and has the management scope (or is the operator token).' })
          : failure,
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="sign-in">
      <h1>Voice Agent Platform</h1>
      <form onSubmit={submit} aria-labelledby="sign-in-title">
        <h2 id="sign-in-title">Sign in</h2>
        {notice ? <p role="status">{notice}</p> : null}
        <TextField
          label="API token"
          type="password"
          autoComplete="off"
          required
          value={token}
          onChange={(e) => setToken(e.target.value)}
          hint="A tenant token with the management scope, or the operator token (data/operator-token)."
        />
        <ErrorBox error={error} title="Sign-in failed" />
        <button type="submit" disabled={busy || token.trim() === ''}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
