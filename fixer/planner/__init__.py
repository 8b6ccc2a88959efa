"""Stage 4, plan: Environment + Stack -> Plan (ordered steps, each an exact command).

`steps.make_plan` builds the steps; `simulate` runs them on the model and re-diagnoses;
`installers` builds every installer's argv; `conda` knows where conda puts cuDNN.
"""
