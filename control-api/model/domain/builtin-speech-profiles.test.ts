import assert from 'node:assert/strict';
import { ttsForProfile } from '../../../media/speech/provider-registry.js';
import { builtInSpeechProfileById, builtInSpeechProfileByName, builtInSpeechProfiles } from './builtin-speech-profiles.js';
import { speechProfileSchema } from './speech-profile.js';
import { strictDeep } from './strict.js';

describe('built-in speech profile catalogue', () => {
  it('holds valid, uniquely named and identified profiles, a male and a female voice per language', () => {
    const strict = strictDeep(speechProfileSchema);
    for (const p of builtInSpeechProfiles) assert.deepEqual(strict.parse(p.spec), p.spec, p.spec.name);
    assert.equal(new Set(builtInSpeechProfiles.map((p) => p.spec.name)).size, builtInSpeechProfiles.length);
    assert.equal(new Set(builtInSpeechProfiles.map((p) => p.id)).size, builtInSpeechProfiles.length);
    const languages = new Set(builtInSpeechProfiles.map((p) => p.spec.language));
    for (const language of languages) {
      const genders = builtInSpeechProfiles.filter((p) => p.spec.language === language).map((p) => p.spec.gender).sort();
      assert.deepEqual(genders, ['female', 'male'], language);
    }
    for (const tag of ['en-US', 'en-IN', 'hi-IN', 'ta-IN', 'te-IN', 'bn-IN', 'mr-IN', 'gu-IN', 'kn-IN', 'ml-IN', 'pa-IN', 'ur-IN', 'ar']) assert.ok(languages.has(tag), tag);
    const first = builtInSpeechProfiles[0]!;
    assert.equal(builtInSpeechProfileById(first.id.toUpperCase()), first, 'ids compare case-insensitively, as UUIDs do');
    assert.equal(builtInSpeechProfileByName(first.spec.name), first);
    assert.equal(builtInSpeechProfileByName(first.spec.name.toLowerCase()), undefined, 'names are exact, like natural keys');
  });

  it('every built-in voice speaks through the TTS the call would use (espeak-ng)', async function () {
    this.timeout(60_000);
    for (const { spec } of builtInSpeechProfiles) {
      const { tts, voice } = ttsForProfile(spec);
      assert.equal(tts.name, 'espeak-ng');
      assert.equal(voice, spec.voiceName, 'the profile picks the voice, not the language fallback');
      let samples = 0;
      for await (const chunk of tts.synthesize({ text: 'one two', voice, language: spec.language, signal: AbortSignal.timeout(10_000) })) samples += chunk.length;
      assert.ok(samples > 2_000, `${spec.name}: ${samples} samples`);
    }
  });
});
