import { type DynamicModule, Global, Module } from '@nestjs/common';
import type { Platform } from './platform';

/** Provides every component of an opened platform by its token (tokens.ts) to the whole Nest application. */
@Global()
@Module({})
export class PlatformModule {
  static forPlatform(platform: Platform): DynamicModule {
    const providers = platform.providers();
    return { module: PlatformModule, providers, exports: providers.map((p) => (p as { provide: string }).provide) };
  }
}
