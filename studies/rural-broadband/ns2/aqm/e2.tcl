# E2 (Fig. 3) for CoDel and PIE in the authors' ns-2 code: mean queueing delay and drop
# rate at the paper's targets (CoDel 2, 35, 50 ms; PIE 2, 10, 50 ms), B = 100. Needs an
# ns-2.35 with Queue/CoDel and Queue/PIE (../build-ns2-aqm.sh); `aqmlab study ns2
# rural-broadband --ns /usr/local/bin/ns-aqm` runs it, and skips it for an ns without them.
source [file join [file dirname [file normalize [info script]]] .. lib run.tcl]
foreach {t tag} {0.002 2ms 0.035 35ms 0.050 50ms} {
    array set c [cell_mean CoDel $t 100 0.1475]
    puts [format "SCORE E2-codel-delay-at-$tag %.3f" $c(delay_ms)]
    if {$tag ne "35ms"} { puts [format "SCORE E2-codel-drop-at-$tag %.3f" $c(drop_pct)] }
}
foreach {t tag} {0.002 2ms 0.010 10ms 0.050 50ms} {
    array set c [cell_mean PIE $t 100 0.1475]
    puts [format "SCORE E2-pie-delay-at-$tag %.3f" $c(delay_ms)]
    if {$tag ne "10ms"} { puts [format "SCORE E2-pie-drop-at-$tag %.3f" $c(drop_pct)] }
}
