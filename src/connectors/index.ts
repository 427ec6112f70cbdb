// Built-in connectors, exposed as the `sources` and `sinks` namespaces.
export * as sources from './sources.js';
export * as sinks from './sinks.js';
