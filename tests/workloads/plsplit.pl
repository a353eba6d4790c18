# plsplit.pl SECONDS [CYCLE] — a Perl program with a known split of its CPU time: every CYCLE
# seconds (default 2), 30% of it in digest_blocks (a loop around Digest::MD5's md5_hex, an XS
# sub: Perl calling native code) and 70% in sort_numbers (pure Perl: a sort with a named
# comparator sub, by_number), by the clock. At the end it prints the work it did ("digests N
# sorts M"): a profiler's slowdown of it is the work it no longer does in the same time.
use strict;
use warnings;
use Digest::MD5 qw(md5_hex);
use Time::HiRes qw(time);

my ($digests, $sorts) = (0, 0);

sub digest_blocks {
    my ($seconds) = @_;
    my $data = "x" x 65536;
    my $end = time + $seconds;
    my $h = "";
    while (time < $end) {
        $h = md5_hex($data . $h);
        $digests++;
    }
    return $h;
}

sub by_number { $a <=> $b }

sub sort_numbers {
    my ($seconds) = @_;
    my $end = time + $seconds;
    my @numbers = map { ($_ * 7919) % 1000 } 1 .. 500;
    my $n = 0;
    while (time < $end) {
        my @sorted = sort by_number @numbers;
        $n += $sorted[0];
        $sorts++;
    }
    return $n;
}

my $seconds = $ARGV[0] // 4;
my $cycle = $ARGV[1] // 2;
my $end = time + $seconds;
while (time < $end) {
    digest_blocks(0.3 * $cycle);
    sort_numbers(0.7 * $cycle);
}
print "digests $digests sorts $sorts\n";
