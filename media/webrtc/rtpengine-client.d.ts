// rtpengine-client ships no types: the part of its API media/webrtc uses (ng protocol over UDP).
declare module 'rtpengine-client' {
  import { EventEmitter } from 'node:events';

  export type NgValue = string | number | NgValue[] | { [key: string]: NgValue };
  export type NgResponse = { result: string; 'error-reason'?: string; warning?: string; sdp?: string; [key: string]: unknown };
  interface Destination {
    port: number;
    host: string;
  }

  export class Client extends EventEmitter {
    constructor(options: { localPort?: number; localAddress?: string; timeout?: number; rejectOnError?: boolean });
    ping(to: Destination): Promise<NgResponse>;
    offer(to: Destination, options: Record<string, NgValue>): Promise<NgResponse>;
    answer(to: Destination, options: Record<string, NgValue>): Promise<NgResponse>;
    delete(to: Destination, options: Record<string, NgValue>): Promise<NgResponse>;
    query(to: Destination, options: Record<string, NgValue>): Promise<NgResponse>;
    close(): void;
  }
}
