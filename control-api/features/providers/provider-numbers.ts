import { openSecrets } from '../../platform/crypto/secret-fields.js';
import type { SecretBox } from '../../platform/crypto/secret-box.js';
import { phoneNumberSecretPaths, type ProviderConfig } from '../../model/domain/phone-number.js';
import type { SealedNumber, SealedNumbers } from '../../model/resources/definitions/lookups.js';

/** The cloud telephony providers of the spec (credentials per provider, docs/domain.md). */
export type CloudProviderType = 'providerA' | 'providerB' | 'providerC';
export const cloudProviderTypes: readonly CloudProviderType[] = ['providerA', 'providerB', 'providerC'];

/** Secret fields every account of the provider must hold (the spec's credentials table). */
const requiredSecrets = { providerA: ['authToken'], providerB: ['apiKey', 'apiToken'], providerC: ['apiToken', 'apiKey'] } as const;

/** A provider account as calls use it: the number's credentials, secrets opened and present. */
export type CloudAccount<T extends CloudProviderType = CloudProviderType> = T extends CloudProviderType
  ? Extract<ProviderConfig, { type: T }> & { readonly [K in (typeof requiredSecrets)[T][number]]: string }
  : never;

/** A phone number on a cloud provider, with its credentials opened for this call only. */
export interface ProviderNumber {
  readonly id: string;
  readonly tenantId: string;
  readonly e164: string;
  readonly enabled: boolean;
  readonly recipeId: string;
  readonly language: string;
  readonly maxCallDurationMinutes: number;
  readonly endCallOnSilenceMinutes: number;
  readonly account: CloudAccount;
}

export const isCloudProvider = (type: string): type is CloudProviderType => (cloudProviderTypes as readonly string[]).includes(type);

/**
 * Numbers on cloud providers, read per call (an edited number applies to the next call, no
 * restart) with the provider secrets opened here and nowhere else: webhook signature checks and
 * REST calls need them in the clear, logs never see them.
 */
export class ProviderNumbers {
  constructor(
    private readonly records: SealedNumbers,
    private readonly box: SecretBox,
  ) {}

  /** The number with this E.164 when it is on provider `type`, in any tenant (inbound calls do not know it yet). */
  async byE164(type: CloudProviderType, number: string): Promise<ProviderNumber | undefined> {
    const record = await this.records.byE164(number);
    return record && record.provider === type ? this.opened(record) : undefined;
  }

  /** The number by id (a campaign's caller number), whatever its provider. */
  async byId(id: string): Promise<ProviderNumber | undefined> {
    const record = await this.records.byId(id);
    return record && isCloudProvider(record.provider) ? this.opened(record) : undefined;
  }

  /** Which provider a number is on (`customSipTrunk`, `nativeStack`, `providerA` ...); undefined when it no longer exists. */
  async providerOf(id: string): Promise<string | undefined> {
    return (await this.records.byId(id))?.provider;
  }

  /** The number with its account opened; undefined when a required secret is missing (never given). */
  private opened(record: SealedNumber): ProviderNumber | undefined {
    const spec = openSecrets(record.spec, { box: this.box, tenantId: record.tenantId, kind: 'PhoneNumber', paths: phoneNumberSecretPaths });
    const provider = spec.provider as Record<string, unknown> & { type: CloudProviderType };
    if (!requiredSecrets[provider.type].every((name) => typeof provider[name] === 'string' && provider[name] !== '')) return undefined;
    return {
      id: record.id,
      tenantId: record.tenantId,
      e164: record.e164,
      enabled: record.enabled,
      recipeId: record.recipeId,
      language: spec.language,
      maxCallDurationMinutes: spec.maxCallDurationMinutes,
      endCallOnSilenceMinutes: spec.endCallOnSilenceMinutes,
      account: spec.provider as CloudAccount,
    };
  }
}
