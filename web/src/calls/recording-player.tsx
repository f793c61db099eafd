import { useEffect, useState } from 'react';
import { fetchBlob } from '../api/client';
import { ErrorBox } from '../components/error-box';
import { useSession } from '../session';

/**
 * The call's stereo recording (caller left, agent right). An `<audio src>` cannot send the bearer
 * token, so the WAV is fetched with it and played from a blob URL.
 */
export function RecordingPlayer({ url }: { url: string }) {
  const { token } = useSession();
  const [src, setSrc] = useState<string>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let objectUrl: string | undefined;
    let cancelled = false;
    fetchBlob(token, url).then(
      (blob) => {
        if (cancelled) return;
        objectUrl = URL.createObjectURL(blob);
        setSrc(objectUrl);
      },
      (failure: unknown) => !cancelled && setError(failure),
    );
    return () => {
      cancelled = true;
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    };
  }, [token, url]);
  if (error) return <ErrorBox error={error} title="Could not load the recording" />;
  if (!src) return <p aria-live="polite">Loading the recording…</p>;
  return (
    <figure>
      <audio controls src={src} data-testid="recording" aria-describedby="recording-caption" />
      <figcaption id="recording-caption" className="muted">
        Stereo: caller on the left channel, agent on the right.
      </figcaption>
    </figure>
  );
}
