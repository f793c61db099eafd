import { EventEmitter } from 'node:events';

/** EventEmitter with an event map checked by the compiler. */
export class TypedEmitter<Events extends { [K in keyof Events]: unknown[] }> {
  private readonly inner = new EventEmitter();

  on<K extends keyof Events & string>(event: K, listener: (...args: Events[K]) => void): this {
    this.inner.on(event, listener as (...args: unknown[]) => void);
    return this;
  }

  once<K extends keyof Events & string>(event: K, listener: (...args: Events[K]) => void): this {
    this.inner.once(event, listener as (...args: unknown[]) => void);
    return this;
  }

  off<K extends keyof Events & string>(event: K, listener: (...args: Events[K]) => void): this {
    this.inner.off(event, listener as (...args: unknown[]) => void);
    return this;
  }

  emit<K extends keyof Events & string>(event: K, ...args: Events[K]): boolean {
    return this.inner.emit(event, ...args);
  }

  listenerCount<K extends keyof Events & string>(event: K): number {
    return this.inner.listenerCount(event);
  }

  removeAllListeners(): this {
    this.inner.removeAllListeners();
    return this;
  }
}
