"""The run machinery under the tasks: config schemas, resolvers and `build`; the dataset source
and DataModule; the Evaluator that scores one model on one split; a protocol preset's pinned
split."""
