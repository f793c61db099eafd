import { useState } from 'react';

/**
 * The error of an action's last attempt (a create, a delete, a star), for an ErrorBox or a form's
 * field issues: `attempt` clears it, runs the action and keeps what the action threw.
 */
export function useAttempt(): [error: unknown, attempt: (action: () => Promise<void>) => Promise<void>] {
  const [error, setError] = useState<unknown>();
  const attempt = async (action: () => Promise<void>): Promise<void> => {
    setError(undefined);
    try {
      await action();
    } catch (failure) {
      setError(failure);
    }
  };
  return [error, attempt];
}
