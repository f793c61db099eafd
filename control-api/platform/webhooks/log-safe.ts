/**
 * Webhook targets in logs: a tenant's URL may carry credentials in its userinfo, path or query,
 * so logs name its host only, and error texts lose any `user:password@` they quote.
 */
export function webhookHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(invalid URL)';
  }
}

export const withoutUrlCredentials = (text: string): string => text.replace(/\/\/[^/@\s]*@/g, '//');
