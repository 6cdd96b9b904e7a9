# E4 (Fig. 5 b): bottleneck utilisation of DropTail and ARED (target 10 ms), B = 100,
# with the b pair's d8 = 2.5 and 147.5 ms, in ns-2.35.
source [file join [file dirname [file normalize [info script]]] lib run.tcl]
foreach {q id} {DropTail droptail ARED ared} {
    foreach d8 {2.5 147.5} {
        array set c [cell_mean $q 0.010 100 [expr {$d8 / 1000.0}]]
        puts [format "SCORE E4-$id-utilisation-d8-${d8}ms %.3f" [expr {100.0 * $c(util)}]]
    }
}
