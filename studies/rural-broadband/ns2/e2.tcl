# E2 (Fig. 3): ARED's mean queueing delay and drop rate at targets 2, 10 and 50 ms,
# B = 100, in ns-2.35 (Queue/RED with adaptive_ 1).
source [file join [file dirname [file normalize [info script]]] lib run.tcl]
foreach {t tag} {0.002 2ms 0.010 10ms 0.050 50ms} {
    array set c [cell_mean ARED $t 100 0.1475]
    puts [format "SCORE E2-ared-delay-at-$tag %.3f" $c(delay_ms)]
    if {$tag ne "10ms"} { puts [format "SCORE E2-ared-drop-at-$tag %.3f" $c(drop_pct)] }
}
