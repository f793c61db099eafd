/** Placeholder until the web call path lands (sip.js over WSS to the gateway). */
export function WebCallPage({ clientId }: { clientId: string }) {
  return (
    <>
      <h1>Web call</h1>
      <p className="muted">Web calls for {clientId} are not available yet.</p>
    </>
  );
}
