/**
 * A transition that breaks Bazel's rules (an undeclared output, an unknown setting, a value of the
 * wrong type): the message is Bazel's; whoever applies the transition adds where it was defined.
 */
export class TransitionValidationError extends Error {}
