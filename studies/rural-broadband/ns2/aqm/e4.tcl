# E4 (Fig. 5 b) for PIE (target 10 ms) and CoDel (target 35 ms), the study's calibrated
# targets, in the authors' ns-2 code: bottleneck utilisation with the b pair's d8 = 2.5
# and 147.5 ms, B = 100. Needs an ns-2.35 with Queue/CoDel and Queue/PIE
# (../build-ns2-aqm.sh).
source [file join [file dirname [file normalize [info script]]] .. lib run.tcl]
foreach {q id t} {PIE pie 0.010 CoDel codel 0.035} {
    foreach d8 {2.5 147.5} {
        array set c [cell_mean $q $t 100 [expr {$d8 / 1000.0}]]
        puts [format "SCORE E4-$id-utilisation-d8-${d8}ms %.3f" [expr {100.0 * $c(util)}]]
    }
}
