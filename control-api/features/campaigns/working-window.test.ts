import assert from 'node:assert/strict';
import { businessHoursSchema } from '../../model/domain/business-hours.js';
import { isOpen, nextOpening, type CallingWindow } from './working-window.js';

const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());

describe('working window calculator', () => {
  describe('custom HH:MM range', () => {
    const kolkata: CallingWindow = { kind: 'custom', start: '09:00', end: '18:00', timezone: 'Asia/Kolkata' };

    it('is open inside the range in the window timezone and closed at the end minute', () => {
      assert.equal(isOpen(kolkata, at('2026-03-02T03:30:00Z')), true); // 09:00 IST
      assert.equal(isOpen(kolkata, at('2026-03-02T12:29:59Z')), true); // 17:59:59 IST
      assert.equal(isOpen(kolkata, at('2026-03-02T12:30:00Z')), false); // 18:00 IST
      assert.equal(isOpen(kolkata, at('2026-03-02T03:29:00Z')), false);
    });

    it('gives the next opening: later today, or tomorrow after the end', () => {
      assert.equal(iso(nextOpening(kolkata, at('2026-03-02T01:00:00Z'))), '2026-03-02T03:30:00.000Z');
      assert.equal(iso(nextOpening(kolkata, at('2026-03-02T13:00:00Z'))), '2026-03-03T03:30:00.000Z');
    });

    it('handles a window that crosses midnight (22:00-06:00)', () => {
      const night: CallingWindow = { kind: 'custom', start: '22:00', end: '06:00', timezone: 'UTC' };
      assert.equal(isOpen(night, at('2026-03-02T23:00:00Z')), true);
      assert.equal(isOpen(night, at('2026-03-03T05:59:00Z')), true);
      assert.equal(isOpen(night, at('2026-03-03T06:00:00Z')), false);
      assert.equal(iso(nextOpening(night, at('2026-03-03T12:00:00Z'))), '2026-03-03T22:00:00.000Z');
    });

    it('keeps wall-clock hours across DST changes (America/New_York)', () => {
      const ny: CallingWindow = { kind: 'custom', start: '09:00', end: '17:00', timezone: 'America/New_York' };
      // Sunday 2026-03-08 DST starts: 09:00 EDT = 13:00Z; the day before 09:00 EST = 14:00Z.
      assert.equal(iso(nextOpening(ny, at('2026-03-07T03:00:00Z'))), '2026-03-07T14:00:00.000Z');
      assert.equal(iso(nextOpening(ny, at('2026-03-08T03:00:00Z'))), '2026-03-08T13:00:00.000Z');
      // Autumn: 2026-11-01 clocks go back; 09:00 EST = 14:00Z again.
      assert.equal(iso(nextOpening(ny, at('2026-11-01T03:00:00Z'))), '2026-11-01T14:00:00.000Z');
    });

    it('moves an opening that falls in the spring-forward gap past the gap', () => {
      const gap: CallingWindow = { kind: 'custom', start: '02:30', end: '04:00', timezone: 'America/New_York' };
      // 02:30 does not exist on 2026-03-08; the window opens at 03:30 EDT (07:30Z).
      assert.equal(iso(nextOpening(gap, at('2026-03-08T05:00:00Z'))), '2026-03-08T07:30:00.000Z');
    });
  });

  describe('business-hours profile', () => {
    const profile = businessHoursSchema.parse({
      name: 'Office',
      hours: [
        { day: 'monday', start: '09:00', end: '12:00' },
        { day: 'monday', start: '14:00', end: '17:00' },
        { day: 'friday', start: '10:00', end: '16:00' },
      ],
      closedDates: ['2026-03-09'],
    });
    const window: CallingWindow = { kind: 'businessHours', profile, timezone: 'Europe/Berlin' };

    it('opens only in the listed periods of each weekday', () => {
      // Monday 2026-03-02, Berlin is UTC+1.
      assert.equal(isOpen(window, at('2026-03-02T08:30:00Z')), true);
      assert.equal(isOpen(window, at('2026-03-02T11:30:00Z')), false); // lunch gap
      assert.equal(iso(nextOpening(window, at('2026-03-02T11:30:00Z'))), '2026-03-02T13:00:00.000Z');
    });

    it('skips closed dates and days without hours', () => {
      // After Friday 2026-03-06 16:00, Monday 2026-03-09 is closed: next is Friday 2026-03-13 10:00.
      assert.equal(iso(nextOpening(window, at('2026-03-06T16:00:00Z'))), '2026-03-13T09:00:00.000Z');
    });

    it('is always open when the working window is off', () => {
      assert.equal(nextOpening({ kind: 'always' }, 123), 123);
    });
  });
});
