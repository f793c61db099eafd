import type { ProviderCallEntry } from '../provider-calls.js';
import type { CloudAccount, ProviderNumber } from '../provider-numbers.js';

/** Provider A's account of a call or number; undefined when it belongs to another provider (tokens are shared by all). */
export function accountA(of: ProviderCallEntry | ProviderNumber | undefined): CloudAccount<'providerA'> | undefined {
  const account = of && ('number' in of ? of.number.account : of.account);
  return account?.type === 'providerA' ? account : undefined;
}
