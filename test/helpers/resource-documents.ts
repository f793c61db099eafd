import { randomBytes } from 'node:crypto';
import type { AuthProfileSpec } from '../../control-api/model/domain/auth-profile.js';
import type { CampaignInput } from '../../control-api/model/domain/campaign.js';
import type { PhoneNumberInput } from '../../control-api/model/domain/phone-number.js';
import type { SipTrunkInput } from '../../control-api/model/domain/sip-trunk.js';
import type { RecipeInput } from '../../control-api/model/recipes/recipe-schema.js';
import { createSecretBox } from '../../control-api/platform/crypto/secret-box.js';

/** Small valid documents for repository and lookup tests. */
export const testBox = () => createSecretBox(randomBytes(32));

export const recipeDoc = (name: string, extra: Partial<RecipeInput> = {}): RecipeInput => ({
  name,
  startBlockId: 'greet',
  blocks: [
    { id: 'greet', type: 'message', settings: { text: 'Namaste {{name}}, welcome to the plant store.' } },
    { id: 'bye', type: 'close', settings: { closingScript: 'Goodbye', disposition: 'done' } },
  ],
  connections: [{ from: 'greet', exit: 'next', to: 'bye' }],
  ...extra,
});

export const numberDoc = (number: string, recipe: string, extra: Partial<PhoneNumberInput> = {}): PhoneNumberInput => ({
  number,
  recipe,
  provider: { type: 'providerA', accountSid: 'AC123', authToken: 'clear-provider-token-1' },
  ...extra,
});

export const campaignDoc = (name: string, phoneNumber: string, recipe: string, extra: Partial<CampaignInput> = {}): CampaignInput => ({
  name,
  phoneNumber,
  recipe,
  ...extra,
});

export const trunkDoc = (name: string, extra: Partial<SipTrunkInput> = {}): SipTrunkInput => ({
  name,
  inbound: { terminationAddresses: ['127.0.0.10', 'GW.Example.com'], dids: ['+914440000001'], extension: '7001' },
  outbound: { username: 'acme-out', password: 'clear-sip-password-1', transport: 'udp' },
  ...extra,
});

export const authDoc = (name: string): AuthProfileSpec => ({ name, auth: { scheme: 'bearer', token: 'clear-bearer-token-1' } });
