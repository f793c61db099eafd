/** `Location` of a created item: the collection path (a trailing slash is allowed on it) plus the id. */
export const locationOf = (collectionPath: string, id: string): string => `${collectionPath.replace(/\/+$/, '')}/${encodeURIComponent(id)}`;
