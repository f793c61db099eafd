// Minimal typings for the untyped `rtpengine-client` package (the subset media/rtpengine uses).
declare module 'rtpengine-client' {
  import type { EventEmitter } from 'node:events';

  export type NgValue = string | number | Buffer | NgValue[] | { [key: string]: NgValue | undefined };
  export type NgMessage = { [key: string]: NgValue | undefined };

  export class Client extends EventEmitter {
    constructor(options: { localPort?: number; localAddress?: string; timeout?: number; rejectOnError?: boolean });
    ping(port: number, host: string): Promise<NgMessage>;
    offer(port: number, host: string, options: NgMessage): Promise<NgMessage>;
    answer(port: number, host: string, options: NgMessage): Promise<NgMessage>;
    delete(port: number, host: string, options: NgMessage): Promise<NgMessage>;
    query(port: number, host: string, options: NgMessage): Promise<NgMessage>;
    playDTMF(port: number, host: string, options: NgMessage): Promise<NgMessage>;
    playMedia(port: number, host: string, options: NgMessage): Promise<NgMessage>;
    stopMedia(port: number, host: string, options: NgMessage): Promise<NgMessage>;
    close(): void;
  }

  export class RtpEngineError extends Error {}
}
