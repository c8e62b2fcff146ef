"""Faults on purpose (reliability runs): the gateway answers a planned share of the apps' calls with a fault.

`plan` draws which calls (a pure function of the seed, the task, the trial and the call's position),
`answers` says what a faulted call answers in each mode, `battles` keeps one plan per running battle. The
gateway consults them at the one place a call is about to be forwarded (`Gateway._outcome`); a faulted call
never reaches AppWorld. The spec itself is the kernel's (`kernel.fault_spec`): front doors only carry it.
"""
