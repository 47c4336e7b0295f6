export { openPlatform, Platform } from './platform';
export { PlatformModule } from './platform.module';
export * from './tokens';
