import { pcmu } from '../codecs/g711.js';
import { Resampler } from './resampler.js';
import { retryableStatus, SpeechProviderError, type TtsProvider, type TtsRequest } from './speech-provider.js';

/** Shared body of the HTTP streaming adapters: status mapping, abort, byte -> PCM conversion. */
async function* streamAudio(
  provider: string,
  url: string,
  init: RequestInit,
  signal: AbortSignal,
  decode: (bytes: Uint8Array) => Int16Array,
): AsyncIterable<Int16Array> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal });
  } catch (error) {
    if (signal.aborted) return;
    throw new SpeechProviderError(provider, `request failed: ${(error as Error).message}`, true, error);
  }
  if (!res.ok || !res.body) {
    const detail = (await res.text().catch(() => '')).slice(0, 200);
    throw new SpeechProviderError(provider, `HTTP ${res.status} ${detail}`, retryableStatus(res.status));
  }
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      if (signal.aborted) return;
      const out = decode(chunk);
      if (out.length > 0) yield out;
    }
  } catch (error) {
    if (signal.aborted) return;
    throw new SpeechProviderError(provider, `stream broke: ${(error as Error).message}`, true, error);
  }
}

/** Little-endian 16-bit PCM bytes that may split a sample across chunks. */
function pcm16Decoder(resampler: Resampler): (bytes: Uint8Array) => Int16Array {
  let odd: number | undefined;
  return (bytes) => {
    const n = Math.floor((bytes.length + (odd === undefined ? 0 : 1)) / 2);
    const pcm = new Int16Array(n);
    let i = 0;
    let at = 0;
    if (odd !== undefined && bytes.length > 0) {
      pcm[i++] = (odd | (bytes[0]! << 8)) << 16 >> 16;
      at = 1;
      odd = undefined;
    }
    for (; at + 1 < bytes.length; at += 2) pcm[i++] = (bytes[at]! | (bytes[at + 1]! << 8)) << 16 >> 16;
    if (at < bytes.length) odd = bytes[at];
    return resampler.process(pcm.subarray(0, i));
  };
}

export interface ElevenLabsOptions {
  readonly apiKey: string;
  readonly baseUrl?: string;
  readonly modelId?: string;
}

/**
 * ElevenLabs streaming TTS: `POST /v1/text-to-speech/{voice_id}/stream?output_format=ulaw_8000`
 * with `xi-api-key`; the chunked response is raw mu-law at 8 kHz, the call's own format.
 */
export class ElevenLabsTts implements TtsProvider {
  readonly name = 'elevenlabs';

  constructor(private readonly options: ElevenLabsOptions) {}

  synthesize({ text, voice, language, signal }: TtsRequest): AsyncIterable<Int16Array> {
    const url = new URL(`/v1/text-to-speech/${encodeURIComponent(voice)}/stream`, this.options.baseUrl ?? 'https://api.elevenlabs.io');
    url.searchParams.set('output_format', 'ulaw_8000');
    const body = { text, model_id: this.options.modelId ?? 'eleven_flash_v2_5', language_code: language.split('-')[0] };
    return streamAudio(
      this.name,
      url.toString(),
      { method: 'POST', headers: { 'xi-api-key': this.options.apiKey, 'content-type': 'application/json', accept: 'audio/basic' }, body: JSON.stringify(body) },
      signal,
      (bytes) => pcmu.decode(bytes),
    );
  }
}

export interface AzureTtsOptions {
  readonly apiKey: string;
  /** e.g. `centralindia`; ignored when baseUrl is set. */
  readonly region?: string;
  readonly baseUrl?: string;
}

const xmlEscape = (s: string): string =>
  s.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c] ?? c);

/**
 * Azure AI Speech TTS over REST: `POST /cognitiveservices/v1` with SSML, the key in
 * `Ocp-Apim-Subscription-Key` and `X-Microsoft-OutputFormat: raw-16khz-16bit-mono-pcm`
 * (streamed as it is synthesised), resampled to 8 kHz here.
 */
export class AzureTts implements TtsProvider {
  readonly name = 'azure';

  constructor(private readonly options: AzureTtsOptions) {}

  synthesize({ text, voice, language, signal }: TtsRequest): AsyncIterable<Int16Array> {
    const base = this.options.baseUrl ?? `https://${this.options.region ?? 'eastus'}.tts.speech.microsoft.com`;
    const ssml = `<speak version="1.0" xmlns="http://www.w3.org/2001/10/synthesis" xml:lang="${xmlEscape(language)}"><voice name="${xmlEscape(voice)}">${xmlEscape(text)}</voice></speak>`;
    return streamAudio(
      this.name,
      new URL('/cognitiveservices/v1', base).toString(),
      {
        method: 'POST',
        headers: {
          'Ocp-Apim-Subscription-Key': this.options.apiKey,
          'Content-Type': 'application/ssml+xml',
          'X-Microsoft-OutputFormat': 'raw-16khz-16bit-mono-pcm',
          'User-Agent': 'voice-agent-platform',
        },
        body: ssml,
      },
      signal,
      pcm16Decoder(new Resampler(16000, 8000)),
    );
  }
}
