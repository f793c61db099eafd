import { beep, pause, say, type AmdItemSpec, type Voice } from './amd-corpus.js';

/**
 * The HELD-OUT split of the answering-machine set: 20 call openings whose texts were written
 * before the detector was retuned (issue 26) and spoken by voices the tuning split does not use
 * (Festival kal, ked and the HTS slt voice, espeak-ng en-us+m3 and en+f3), some at +-15% tempo,
 * some under noise 20 dB below the speech, beeps at 400-2000 Hz, some of them under that noise.
 * Nothing here may be used to choose a threshold or a rule: tune on the tuning split
 * (amd-tuning-set.ts) and only measure on this one (bench/amd-confusion.ts prints both).
 */
const festKal: Voice = { festival: 'kal_diphone' };
const festKed: Voice = { festival: 'ked_diphone' };
const festSlt: Voice = { festival: 'cmu_us_slt_arctic_hts' };
const m3: Voice = { espeak: 'en-us+m3' };
const f3: Voice = { espeak: 'en+f3' };

export const amdHeldOutSpec: readonly AmdItemSpec[] = [
  // Machines.
  { name: 'x-m01-ked-tom-and-lisa', truth: 'machine', parts: [pause(300), say("Hi, you've reached Tom and Lisa. We can't come to the phone right now, so leave a message after the beep.", festKed), pause(400), beep(600, 400)] },
  { name: 'x-m02-slt-hello-pause-neha-noise', truth: 'machine', noise: { kind: 'pinknoise', snrDb: 20 }, parts: [pause(250), say('Hello,', festSlt), pause(700), say("this is Neha. I'm away from my phone, please leave your name and number.", festSlt), pause(500), beep(1800, 300)] },
  { name: 'x-m03-m3-carrier-1400-noise', truth: 'machine', noise: { kind: 'whitenoise', snrDb: 20 }, parts: [pause(400), say('The number you have dialled is not available. Please record your message after the tone. When you have finished, you may hang up.', m3), pause(300), beep(1400, 500, -14)] },
  { name: 'x-m04-kal-garden-centre-fast', truth: 'machine', tempo: 1.15, parts: [pause(300), say('Thanks for calling Greenleaf Garden Centre. We are closed right now. Our opening hours are nine to six, Monday to Saturday.', festKal)] },
  { name: 'x-m05-beep-only-2000-noise', truth: 'machine', noise: { kind: 'whitenoise', snrDb: 20 }, parts: [pause(1200), beep(2000, 400)] },
  { name: 'x-m06-f3-hey-you-got-mike', truth: 'machine', parts: [pause(200), say('Hey!', f3), pause(500), say('You got Mike. You know what to do.', f3), pause(400), beep(400, 600)] },
  { name: 'x-m07-ked-slow-hello-pause-arjun', truth: 'machine', tempo: 0.85, parts: [pause(300), say('Hello,', festKed), pause(900), say('you are through to the voicemail of Arjun Singh. Speak after the tone.', festKed), pause(300), beep(1000, 500)] },
  { name: 'x-m08-slt-late-missed-call-brown', truth: 'machine', noise: { kind: 'brownnoise', snrDb: 20 }, parts: [pause(1000), say("Sorry I missed your call. Leave a message and I'll ring you back.", festSlt), pause(400), beep(700, 500, -18)] },
  { name: 'x-m09-m3-kavya-short-phrases', truth: 'machine', parts: [pause(300), say("Hi, it's Kavya.", m3), pause(400), say("Can't talk now.", m3), pause(300), say('Text me or leave a message.', m3), pause(300), beep(1200, 400)] },
  { name: 'x-m10-kal-doctor-iyer-pink', truth: 'machine', noise: { kind: 'pinknoise', snrDb: 20 }, parts: [pause(300), say('You have reached the office of Doctor Iyer. If this is an emergency, please hang up and dial one one two.', festKal), pause(400), beep(900, 500)] },
  // People: they answer, then wait for us.
  { name: 'x-h01-ked-hello', truth: 'human', parts: [pause(500), say('Hello?', festKed)] },
  { name: 'x-h02-ked-mehta-and-sons-question', truth: 'human', parts: [pause(300), say('Good evening, Mehta and Sons, Anil speaking. What can I do for you?', festKed)] },
  { name: 'x-h03-m3-fast-yes-whos-this', truth: 'human', tempo: 1.15, parts: [pause(300), say("Yes? Who's this?", m3)] },
  { name: 'x-h04-f3-hello-can-you-hear-me', truth: 'human', parts: [pause(300), say('Hello?', f3), pause(1300), say('Hello, can you hear me?', f3)] },
  { name: 'x-h05-kal-whats-up-white', truth: 'human', noise: { kind: 'whitenoise', snrDb: 20 }, parts: [pause(400), say("Hey, what's up?", festKal)] },
  { name: 'x-h06-slt-slow-deepa-speaking', truth: 'human', tempo: 0.85, parts: [pause(300), say('Hello, Deepa speaking.', festSlt)] },
  { name: 'x-h07-m3-late-yeah-hello-pink', truth: 'human', noise: { kind: 'pinknoise', snrDb: 20 }, parts: [pause(1400), say('Yeah, hello?', m3)] },
  { name: 'x-h08-f3-sorry-who-is-calling', truth: 'human', parts: [pause(300), say('Hi, sorry, who is calling?', f3)] },
  { name: 'x-h09-kal-ramesh-brown', truth: 'human', noise: { kind: 'brownnoise', snrDb: 20 }, parts: [pause(300), say('Hello, this is Ramesh.', festKal)] },
  { name: 'x-h10-slt-hi-question-after-pause', truth: 'human', parts: [pause(600), say('Hi.', festSlt), pause(700), say('Is this about my order?', festSlt)] },
];
