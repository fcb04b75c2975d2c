// Kiln's one options parser and the definitions every command's table is made of (README.md of src/core).
export {
  type OptionValue,
  type OptionType,
  type OptionDefinition,
  type StringOptionDefinition,
  type BoolOptionDefinition,
  type IntOptionDefinition,
  type DurationOptionDefinition,
  type ListOptionDefinition,
  type ListConverter,
  OptionValueError,
  convertBool,
  convertOccurrence,
  formatDuration,
  sameOptionValue,
} from './option-definition.js';
export { OptionRegistry } from './option-registry.js';
export { OptionValues } from './option-values.js';
export {
  OptionsParser,
  parseOptions,
  type OptionOccurrence,
  type ParsedOptions,
  type UnregisteredOption,
  type UnregisteredOptionHandler,
} from './options-parser.js';
export { optionsHelp } from './option-help.js';
