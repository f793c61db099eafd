import { beep, pause, say } from './amd-corpus.js';
import type { AmdItemSpec } from './amd-corpus.js';

/**
 * The TUNING split of the answering-machine set: the openings the detector's thresholds were
 * chosen on (flite voices kal, slt, rms, awb; espeak-ng en-us, en-us+f3, en-gb, en-gb+f2, en-029).
 * The held-out split (amd-heldout-set.ts) uses other texts and other voices and is only measured.
 */
const kal = { flite: 'kal' } as const;
const slt = { flite: 'slt' } as const;
const rms = { flite: 'rms' } as const;
const awb = { flite: 'awb' } as const;
const usMale = { espeak: 'en-us' } as const;
const usFemale = { espeak: 'en-us+f3' } as const;
const gbFemale = { espeak: 'en-gb+f2', wpm: 155 } as const;
const gbMale = { espeak: 'en-gb' } as const;
const caribbean = { espeak: 'en-029', wpm: 175 } as const;

export const amdTuningSpec: readonly AmdItemSpec[] = [
  // Machines whose greeting opens with a short phrase and a pause (the case length rules miss).
  { name: 'm01-kal-hello-pause-reached', truth: 'machine', parts: [pause(200), say('Hello,', kal), pause(400), say('you have reached the Sharma family. Please leave a message after the tone.', kal), pause(300), beep(1000, 500)] },
  { name: 'm02-slt-hi-this-is-sam', truth: 'machine', parts: [pause(300), say('Hi, this is Sam.', slt), pause(600), say('I cannot come to the phone right now. Leave a message and I will call you back.', slt), pause(500), beep(850, 400)] },
  { name: 'm03-rms-hello-two-pauses', truth: 'machine', parts: [say('Hello.', rms), pause(300), say('You have reached the voicemail of Priya Nair.', rms), pause(250), say('Please leave a message after the tone.', rms), pause(400), beep(1400, 300)] },
  { name: 'm04-awb-hey-its-alex', truth: 'machine', parts: [pause(250), say('Hey,', awb), pause(500), say('it is Alex. Sorry I missed your call, leave your name and number.', awb), pause(600), beep(440, 800)] },
  { name: 'm05-espeak-us-hello-long-pause', truth: 'machine', parts: [pause(150), say('Hello,', usMale), pause(700), say('you have reached the office of doctor Mehta. We are not available right now.', usMale), pause(300), beep(1000, 500)] },
  { name: 'm06-espeak-gb-female-hi', truth: 'machine', parts: [pause(400), say('Hi!', gbFemale), pause(350), say('Sorry we missed you. Please leave a message after the beep.', gbFemale), pause(200), beep(950, 500)] },
  { name: 'm07-espeak-caribbean-good-morning', truth: 'machine', parts: [pause(300), say('Good morning,', caribbean), pause(550), say('thank you for calling. Nobody can take your call, please leave a message.', caribbean), pause(400), beep(1000, 600)] },
  { name: 'm08-kal-hello-pink-noise', truth: 'machine', noise: { kind: 'pinknoise', db: -42 }, parts: [pause(300), say('Hello,', kal), pause(450), say('this is Ravi. I am not available, please leave a message.', kal), pause(300), beep(850, 500)] },
  { name: 'm09-slt-hello-question-quiet', truth: 'machine', levelDb: -16, parts: [pause(200), say('Hello?', slt), pause(500), say('You have reached the Kapoor residence. Please leave a message after the tone.', slt), pause(300), beep(1000, 500)] },
  // Machines that talk on without a pause.
  { name: 'm10-espeak-us-female-continuous', truth: 'machine', parts: [pause(300), say('The person you are calling is not available. Please leave a message after the tone.', usFemale), pause(300), beep(1000, 500)] },
  { name: 'm11-awb-continuous', truth: 'machine', parts: [say('Thank you for calling the clinic. Our office is closed, please leave your name and number after the beep.', awb), pause(400), beep(1400, 400)] },
  // Beep-only machines: just a beep, or silence then a beep.
  { name: 'm12-beep-only-1000', truth: 'machine', parts: [pause(300), beep(1000, 500)] },
  { name: 'm13-silence-then-beep-440', truth: 'machine', parts: [pause(1500), beep(440, 600)] },
  { name: 'm14-silence-then-beep-1400-noise', truth: 'machine', noise: { kind: 'whitenoise', db: -45 }, parts: [pause(2200), beep(1400, 400)] },
  // More greetings with a short phrase and a long pause (800-900 ms), late starts, rumble.
  { name: 'm15-kal-late-hello-long-pause', truth: 'machine', parts: [pause(800), say('Hello,', kal), pause(900), say('you have reached the Rao family. Please leave a message.', kal), pause(300), beep(1000, 500)] },
  { name: 'm16-espeak-female-hi-pause', truth: 'machine', parts: [pause(500), say('Hi,', usFemale), pause(800), say('this is Meera. I cannot take your call right now.', usFemale), pause(500), beep(850, 500)] },
  { name: 'm17-rms-namaste-brown-noise', truth: 'machine', noise: { kind: 'brownnoise', db: -38 }, parts: [pause(300), say('Namaste,', rms), pause(600), say('you have reached Anil. Please leave a message after the beep.', rms), pause(400), beep(1400, 300)] },
  // People: a short answer, then they wait for us.
  { name: 'h01-kal-hello', truth: 'human', parts: [pause(300), say('Hello?', kal)] },
  { name: 'h02-slt-hello-who-is-this', truth: 'human', parts: [pause(400), say('Hello, who is this?', slt)] },
  { name: 'h03-rms-hello-twice', truth: 'human', parts: [pause(300), say('Hello?', rms), pause(1500), say('Hello?', rms)] },
  { name: 'h04-awb-yes-hello', truth: 'human', parts: [pause(500), say('Yes, hello?', awb)] },
  { name: 'h05-espeak-us-hello-pink-noise', truth: 'human', noise: { kind: 'pinknoise', db: -40 }, parts: [pause(300), say('Hello?', usMale)] },
  { name: 'h06-espeak-female-hi-this-is-sam', truth: 'human', parts: [pause(350), say('Hi, this is Sam.', usFemale)] },
  { name: 'h07-espeak-gb-hello-twice-who', truth: 'human', parts: [pause(300), say('Hello?', gbMale), pause(1200), say('Hello? Who is this?', gbMale)] },
  { name: 'h08-slt-late-hello', truth: 'human', parts: [pause(1000), say('Hello?', slt)] },
  { name: 'h09-kal-priya-speaking-white-noise', truth: 'human', noise: { kind: 'whitenoise', db: -42 }, parts: [pause(400), say('Hello, Priya speaking.', kal)] },
  { name: 'h10-espeak-gb-female-hello-twice-brown-noise', truth: 'human', noise: { kind: 'brownnoise', db: -38 }, parts: [pause(300), say('Hello?', gbFemale), pause(1100), say('Hello?', gbFemale)] },
  { name: 'h11-rms-good-morning-quiet', truth: 'human', levelDb: -18, parts: [pause(600), say('Hello, good morning.', rms)] },
  { name: 'h12-espeak-caribbean-yes-who-is-calling', truth: 'human', parts: [pause(300), say('Yes? Who is calling?', caribbean)] },
  { name: 'h13-awb-hello-anyone-there', truth: 'human', parts: [pause(300), say('Hello?', awb), pause(1800), say('Hello? Anyone there?', awb)] },
  { name: 'h14-espeak-us-very-late-hello', truth: 'human', parts: [pause(1200), say('Hello.', usMale)] },
  { name: 'h15-slt-good-afternoon-residence', truth: 'human', parts: [pause(300), say('Good afternoon, Sharma residence.', slt)] },
  // Added for issue 26 (the outside check's failure classes, in the tuned voices with new texts):
  // live answers that end in a question, noise 20 dB below the speech, beeps under that noise.
  { name: 'h16-slt-priya-accounts-team-question', truth: 'human', parts: [pause(300), say('Hi, this is Priya from the accounts team. How can I help you?', slt)] },
  { name: 'h17-espeak-us-whos-speaking-white-snr20', truth: 'human', noise: { kind: 'whitenoise', snrDb: 20 }, parts: [pause(500), say("Hello, who's speaking?", usMale)] },
  { name: 'h18-kal-hi-pause-who-is-this', truth: 'human', parts: [pause(300), say('Hi.', kal), pause(600), say('Who is this?', kal)] },
  { name: 'h19-awb-can-i-help-you-pink-snr20', truth: 'human', noise: { kind: 'pinknoise', snrDb: 20 }, parts: [pause(400), say('Yes, hello, can I help you?', awb)] },
  { name: 'h20-rms-good-morning-how-can-i-help', truth: 'human', parts: [pause(300), say('Good morning, Sunil speaking, how can I help?', rms)] },
  { name: 'm18-rms-greeting-beep-1400-white-snr20', truth: 'machine', noise: { kind: 'whitenoise', snrDb: 20 }, parts: [pause(300), say('Hello, you have reached Vikram. Please leave a message after the tone.', rms), pause(300), beep(1400, 400, -16)] },
  { name: 'm19-beep-only-1700-pink-snr20', truth: 'machine', noise: { kind: 'pinknoise', snrDb: 20 }, parts: [pause(900), beep(1700, 300, -20)] },
  { name: 'm20-slt-fast-greeting-beep-500-brown-snr20', truth: 'machine', tempo: 1.15, noise: { kind: 'brownnoise', snrDb: 20 }, parts: [pause(300), say('Hi, Anita here. Leave your message after the beep please.', slt), pause(300), beep(500, 500)] },
  { name: 'm21-espeak-gb-late-hello-pause-pink-snr20', truth: 'machine', noise: { kind: 'pinknoise', snrDb: 20 }, parts: [pause(1200), say('Hello,', gbMale), pause(600), say('you have reached the Iyer family. Leave a message.', gbMale), pause(300), beep(1100, 400)] },
];
