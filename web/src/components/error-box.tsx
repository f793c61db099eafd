import { ApiError, describeError } from '../api/client';

/** A request's failure in the API's own words, with every field issue it named. */
export function ErrorBox({ error, title }: { error: unknown; title?: string }) {
  if (error === undefined || error === null) return null;
  const issues = error instanceof ApiError ? (error.body.issues ?? []) : [];
  return (
    <div className="error" role="alert">
      <strong>{title ?? 'Not done'}:</strong> {describeError(error)}
      {issues.length > 0 && (
        <ul>
          {issues.map((issue) => (
            <li key={`${issue.path}:${issue.message}`}>
              {issue.path ? <code>{issue.path}</code> : null} {issue.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
