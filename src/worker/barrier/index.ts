export * from './aligning-barrier-handler.js';
export * from './alignment-state.js';
export * from './barrier-effect.js';
export * from './barrier-handler.js';
export * from './create-barrier-handler.js';
export * from './input-channels.js';
export * from './tracking-barrier-handler.js';
export * from './tracking-state.js';
