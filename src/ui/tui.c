/* tui.c — the interactive frontend: the terminal, and the screen's ops for session_run(), which
 * owns the loop. tui_screen.c keeps the state, tui_draw.c draws it.
 *
 * Threads: this runs on the thread that runs the session (the main thread) and reads the profile
 * only through snapshot references. Signals: session_open() blocked SIGINT, SIGTERM, SIGQUIT,
 * SIGHUP, SIGCHLD and SIGUSR1 in every thread; the session reads them from a signalfd, so
 * quitting on them goes through the screen's leave op, which restores the terminal. SIGWINCH is
 * not blocked: ncurses' handler turns it into KEY_RESIZE, and ours (chained before it) also
 * writes to a pipe the loop polls, since the signal may land on another thread while this one
 * sleeps in poll().
 * Fatal errors restore the terminal through util_set_fatal_hook(), on this thread only. */
#include "proftop/ui/tui.h"

#include "proftop/export.h"
#include "proftop/session.h"
#include "proftop/ui/theme.h"
#include "proftop/ui/tui_screen.h"
#include "proftop/ui/tui_timeline.h"
#include "proftop/util.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>
#include <termios.h>
#include <unistd.h>

#define MESSAGE_NS 5000000000ull   /* a message stays this long, or until a key */
#define WINDOW_WAIT_NS 150000000ull /* after a new stretch: the collector's next publication */

/* The few globals signal handlers and the fatal hook need. */
static SCREEN *active_screen;
static FILE *tty_in;            /* /dev/tty when stdin is not the terminal */
static int winch_pipe[2] = { -1, -1 };
static struct sigaction curses_winch;

struct tui {
	struct tui_screen screen;
	struct session *session;
	const struct tui_options *o;
	uint64_t refresh_at;       /* an early refresh asked for (after w, +, -); 0: none */
	uint32_t traced;           /* the function the timeline follows (the selected one) */
	char **themes;
	size_t nthemes;
	bool no_colors;
	char *said;                /* the warnings and errors shown, for stderr once the screen is gone */
};

/* --- the terminal ----------------------------------------------------------------------------- */

static void restore_terminal(void)
{
	if (!active_screen)
		return;
	endwin();
	sigaction(SIGWINCH, &curses_winch, NULL);
	delscreen(active_screen);
	active_screen = NULL;
	if (tty_in)
		fclose(tty_in);
	tty_in = NULL;
	for (int i = 0; i < 2; i++) {
		if (winch_pipe[i] >= 0)
			close(winch_pipe[i]);
		winch_pipe[i] = -1;
	}
	util_set_fatal_hook(NULL);
}

static void on_winch(int sig, siginfo_t *info, void *context)
{
	int saved = errno;

	if (curses_winch.sa_flags & SA_SIGINFO) {
		if (curses_winch.sa_sigaction)
			curses_winch.sa_sigaction(sig, info, context);
	} else if (curses_winch.sa_handler != SIG_DFL && curses_winch.sa_handler != SIG_IGN) {
		curses_winch.sa_handler(sig);
	}
	if (winch_pipe[1] >= 0 && write(winch_pipe[1], "w", 1) < 0) {
		/* the pipe is full: the loop is awake already */
	}
	errno = saved;
}

static void chain_winch(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_winch;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (pipe2(winch_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		winch_pipe[0] = winch_pipe[1] = -1;
	sigaction(SIGWINCH, &sa, &curses_winch);
}

static FILE *key_input(void)
{
	if (isatty(STDIN_FILENO))
		return stdin;
	tty_in = fopen("/dev/tty", "re");
	return tty_in;
}

bool tui_usable(void)
{
	const char *term = getenv("TERM");
	int err = 0, fd;

	if (!isatty(STDOUT_FILENO) || !term || !*term || !strcmp(term, "dumb"))
		return false;
	if (setupterm(NULL, STDOUT_FILENO, &err) != OK)
		return false;
	del_curterm(cur_term);
	if (isatty(STDIN_FILENO))
		return true;
	fd = open("/dev/tty", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Ctrl-S would stop the terminal's output until Ctrl-Q: the screen would freeze, and a frame
 * blocked in write() would keep proftop from acting on SIGTERM. So flow control is off while the
 * screen is up (Ctrl-S is then a key like any other). fd is the terminal ncurses draws on and
 * keeps the modes of: the change becomes its program mode, and endwin() puts back the shell's
 * modes, IXON included. */
static void no_flow_control(int fd)
{
	struct termios tio;

	if (tcgetattr(fd, &tio) < 0)
		return;
	tio.c_iflag &= ~(tcflag_t)(IXON | IXOFF);
	if (tcsetattr(fd, TCSANOW, &tio) == 0)
		def_prog_mode();
}

static int open_terminal(struct tui *t)
{
	FILE *in = key_input();

	setlocale(LC_ALL, "");
	if (!in)
		return -1;
	active_screen = newterm(NULL, stdout, in);
	if (!active_screen) {
		if (tty_in)
			fclose(tty_in);
		tty_in = NULL;
		return -1;
	}
	util_set_fatal_hook(restore_terminal);
	cbreak();
	noecho();
	nonl();
	no_flow_control(STDOUT_FILENO);
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	mouseinterval(0);
	mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	if (has_colors()) {
		start_color();
		use_default_colors();
	}
	t->no_colors = !has_colors();
	t->screen.utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	chain_winch();
	return 0;
}

/* --- themes ----------------------------------------------------------------------------------- */

/* The theme to start with: the one asked for, else default, or mono when colours are unwanted or
 * impossible. A bad theme is reported (also on stderr, which shows once the screen is gone) and
 * the default used. */
static void first_theme(struct tui *t, struct theme *theme, char **complaint)
{
	const char *no_color = getenv("NO_COLOR");
	char *error = NULL;

	theme_builtin(theme, "default");
	*complaint = NULL;
	if (!t->o->theme) {
		if (no_color && *no_color)
			theme_builtin(theme, "mono");
		return;
	}
	if (theme_load(theme, t->o->theme, &error)) {
		*complaint = xasprintf("theme: %s; using the default theme", error);
		diag_print(stderr, DIAG_ERROR, *complaint);
		free(error);
		theme_builtin(theme, "default");
	}
}

static void apply_theme(struct tui *t, const struct theme *theme)
{
	struct theme mono;

	if (t->no_colors && strcmp(theme->name, "mono")) {
		theme_builtin(&mono, "mono");
		theme = &mono;
	}
	tui_draw_theme(&t->screen, theme);
}

static void next_theme(struct tui *t)
{
	struct theme theme;
	char *error = NULL;
	size_t i = 0;

	if (t->no_colors) {
		tui_screen_message(&t->screen, true, "this terminal has no colours: mono theme only");
		return;
	}
	if (!t->themes)
		t->nthemes = theme_names(&t->themes);
	while (i < t->nthemes && strcmp(t->themes[i], t->screen.theme.name))
		i++;
	i = i < t->nthemes ? (i + 1) % t->nthemes : 0;
	if (theme_load(&theme, t->themes[i], &error)) {
		tui_screen_message(&t->screen, true, "%s", error);
		free(error);
		return;
	}
	apply_theme(t, &theme);
	tui_screen_message(&t->screen, false, "theme %s", theme.name);
}

/* --- actions ---------------------------------------------------------------------------------- */

static void change_freq(struct tui *t, bool up)
{
	static const unsigned steps[] = { 1, 10, 49, 99, 199, 499, 999, 1999, 4999, 9999, 19999,
					  49999, 99999 };
	size_t n = sizeof(steps) / sizeof(*steps), i;
	unsigned freq = t->screen.live ? t->screen.live->freq : 999, next, got;

	const char *fixed = session_freq_fixed(t->session);

	if (fixed) {
		tui_screen_message(&t->screen, true, "%s", fixed);
		return;
	}
	if (up) {
		for (i = 0; i < n && steps[i] <= freq; i++)
			;
		next = i < n ? steps[i] : steps[n - 1];
	} else {
		for (i = n; i > 0 && steps[i - 1] >= freq; i--)
			;
		next = i > 0 ? steps[i - 1] : steps[0];
	}
	got = session_set_freq(t->session, next);
	if (!got)
		tui_screen_message(&t->screen, true, "not sampling: the frequency cannot change");
	else if (got < next)
		tui_screen_message(&t->screen, true, "sampling at %u Hz per thread: the most this "
				   "run allows (start with a higher -F to go higher)", got);
	else
		tui_screen_message(&t->screen, false, "sampling at %u Hz per thread", got);
	t->refresh_at = got ? util_now_ns() + WINDOW_WAIT_NS : 0;
}

/* The newest snapshot there is: with a stretch selected, its snapshot, or the cumulative one
 * until there is one. */
static void show_newest(struct tui *t)
{
	struct snapshot *range = NULL, *s = session_newest(t->session, &range);

	if (range && t->screen.timeline.stretch != TUI_STRETCH_ALL) {
		snapshot_unref(s);
		s = range;
	} else {
		snapshot_unref(range);
	}
	tui_screen_set_snapshot(&t->screen, s);
}

/* The frame loop never waits on the engine: it shows the newest snapshot there is and asks for
 * the next, which published() shows when it is there. */
static void refresh_snapshot(struct tui *t)
{
	session_ask(t->session);
	show_newest(t);
}

static void published(void *arg, struct session *session)
{
	(void)session;
	show_newest(arg);
}

/* The screen chose another stretch: the session makes its snapshots from now on. */
static void select_stretch(struct tui *t)
{
	struct snapshot_range range;
	bool ranged = tui_timeline_range(&t->screen.timeline, &range);

	t->screen.timeline.changed = false;
	if (!session_select(t->session, ranged ? &range : NULL)) {
		t->screen.timeline.stretch = TUI_STRETCH_ALL;
		t->screen.timeline.active = false;
		if (ranged)
			tui_screen_message(&t->screen, true, "no timeline: this profile keeps no "
					   "history (a saved profile, or --history 0)");
		return;
	}
	if (!t->screen.timeline.active && t->screen.timeline.stretch == TUI_STRETCH_WINDOW)
		tui_screen_message(&t->screen, false, "the last %.0f seconds only (w again: since the start)",
				   t->screen.timeline.window_s);
	else if (!t->screen.timeline.active)
		tui_screen_message(&t->screen, false, "every sample since the start");
	if (t->screen.ended)
		refresh_snapshot(t); /* the stretch's snapshot was made just now */
	else
		t->refresh_at = util_now_ns() + WINDOW_WAIT_NS;
}

/* `m`: the next mode's profile (cpu, offcpu, runnable, wall; or alloc, inuse and their
 * objects), when the run keeps them. */
static void next_mode(struct tui *t)
{
	const char *kind, *measures;

	if (!session_next_kind(t->session, &kind, &measures)) {
		tui_screen_message(&t->screen, true, "this run samples the CPU only: start with --mode "
				   "offcpu, runnable or wall to see the time off the CPU too");
		return;
	}
	tui_screen_message(&t->screen, false, "mode %s: %s", kind, measures);
	if (t->screen.ended)
		refresh_snapshot(t); /* made just now */
	else
		t->refresh_at = util_now_ns() + WINDOW_WAIT_NS;
}

static bool act(struct tui *t, enum tui_action a)
{
	switch (a) {
	case TUI_ACT_QUIT:
		return false;
	case TUI_ACT_FREQ_UP:
	case TUI_ACT_FREQ_DOWN:
		change_freq(t, a == TUI_ACT_FREQ_UP);
		break;
	case TUI_ACT_SAVE:
		session_save(t->session);
		break;
	case TUI_ACT_STRETCH:
		select_stretch(t);
		break;
	case TUI_ACT_BASELINE: /* what s, SIGUSR1 and the final -o write against */
		session_set_baseline(t->session, t->screen.base_raw, t->screen.base_label);
		break;
	case TUI_ACT_THEME:
		next_theme(t);
		break;
	case TUI_ACT_MODE:
		next_mode(t);
		break;
	case TUI_ACT_REDRAW:
		clearok(curscr, TRUE); /* e.g. after the command wrote over the screen */
		break;
	default:
		break;
	}
	return true;
}

/* Every key waiting; false when one says quit. */
static bool read_keys(struct tui *t)
{
	int key;

	while ((key = getch()) != ERR) {
		enum tui_action a;

		if (key == KEY_MOUSE) {
			MEVENT ev;

			if (getmouse(&ev) != OK)
				continue;
			a = tui_screen_click(&t->screen, ev.y, ev.x, ev.bstate & BUTTON4_PRESSED,
					     ev.bstate & BUTTON5_PRESSED);
		} else {
			a = tui_screen_key(&t->screen, key);
		}
		if (!act(t, a))
			return false;
		/* The next key may act on the rows this one changed (1 then 3: the callers of the
		 * function selected in the Top view). */
		tui_screen_rebuild(&t->screen);
	}
	return true;
}

/* --- the screen's ops for session_run() ---------------------------------------------------- */

/* Whether the terminal we read keys from has gone (a closed window, a hung-up line). */
static bool terminal_gone(void)
{
	struct pollfd p = { .fd = fileno(tty_in ? tty_in : stdin), .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL));
}

/* After every wakeup: keys, the screen's timers, then a frame. */
static bool wake(void *arg, struct session *session)
{
	struct tui *t = arg;
	uint64_t now;
	uint32_t selected;
	char drain[64];

	(void)session;
	while (winch_pipe[0] >= 0 && read(winch_pipe[0], drain, sizeof(drain)) > 0)
		;
	if (terminal_gone() || !read_keys(t))
		return false;
	now = util_now_ns();
	if (t->refresh_at && now >= t->refresh_at) {
		t->refresh_at = 0;
		refresh_snapshot(t);
	}
	if (t->screen.message[0] && now >= t->screen.message_ns + MESSAGE_NS)
		t->screen.message[0] = 0;
	tui_screen_rebuild(&t->screen);
	selected = tui_screen_selected_func(&t->screen);
	if (selected != t->traced) {
		/* The timeline's second row follows the cursor from the next snapshot: soon. */
		t->traced = selected;
		session_trace(t->session, t->traced);
		if (t->screen.ended)
			refresh_snapshot(t); /* counted just now */
		else if (!t->refresh_at)
			t->refresh_at = now + WINDOW_WAIT_NS;
	}
	tui_draw(&t->screen);
	return true;
}

static int ms_until(uint64_t when, uint64_t now)
{
	return when <= now ? 0 : (int)((when - now + 999999) / 1000000);
}

/* The screen's own timers: an early refresh, a message to take down. */
static int timeout_ms(void *arg)
{
	struct tui *t = arg;
	uint64_t now = util_now_ns();
	int ms = t->refresh_at ? ms_until(t->refresh_at, now) : -1;

	if (t->screen.message[0]) {
		int m = ms_until(t->screen.message_ns + MESSAGE_NS, now);

		ms = ms < 0 || m < ms ? m : ms;
	}
	return ms;
}

static void refresh_op(void *arg, struct session *session)
{
	(void)session;
	refresh_snapshot(arg);
}

/* On the status line while the screen is up; warnings and errors are also kept for stderr. */
static void report(void *arg, enum diag_level level, const char *text)
{
	struct tui *t = arg;
	char *said, *buf = NULL;
	size_t cap = 0;

	if (!active_screen) {
		diag_print(stderr, level, text);
		return;
	}
	tui_screen_message(&t->screen, level != DIAG_INFO, "%s", text);
	if (level == DIAG_INFO)
		return;
	/* Kept in visible form, as diag_print() would print it then. */
	said = xasprintf("%sproftop: %s%s\n", t->said ? t->said : "", diag_prefix(level),
			 util_visible_str(text, &buf, &cap));
	free(buf);
	free(t->said);
	t->said = said;
}

/* Profiling is over (the command exited, the processes are gone, the duration passed): keep
 * showing the final profile until q. */
static bool ended(void *arg, struct session *session)
{
	struct tui *t = arg;

	t->screen.ended = true;
	snprintf(t->screen.state, sizeof(t->screen.state), "%s", session_state(session));
	if (active_screen)
		refresh_snapshot(t);
	return true;
}

static void leave(void *arg)
{
	struct tui *t = arg;

	restore_terminal();
	if (t->said)
		fputs(t->said, stderr);
	free(t->said);
	t->said = NULL;
}

static int start(struct tui *t, const struct tui_options *o, const char *target)
{
	struct theme theme;
	char *complaint;

	memset(t, 0, sizeof(*t));
	t->o = o;
	tui_screen_init(&t->screen, target);
	t->screen.timeline.window_s = o->window;
	t->screen.names = o->names;
	first_theme(t, &theme, &complaint);
	if (open_terminal(t) < 0) {
		free(complaint);
		tui_screen_free(&t->screen);
		return -1;
	}
	apply_theme(t, &theme);
	if (complaint)
		tui_screen_message(&t->screen, true, "%s", complaint);
	free(complaint);
	return 0;
}

int tui_run(struct session *session, const struct tui_options *o)
{
	struct tui t;
	struct session_frontend fe = {
		.arg = &t,
		.wake = wake,
		.timeout_ms = timeout_ms,
		.refresh = refresh_op,
		.published = published,
		.report = report,
		.ended = ended,
		.leave = leave,
	};
	struct snapshot *baseline;
	const char *label, *serving;
	int status;

	if (start(&t, o, session_describe(session)) < 0)
		return -1;
	t.session = session;
	snprintf(t.screen.state, sizeof(t.screen.state), "%s", session_state(session));
	serving = session_serving(session, &t.screen.serving_exposed);
	snprintf(t.screen.serving, sizeof(t.screen.serving), "%s", serving ? serving : "");
	baseline = session_baseline(session, &label); /* --baseline */
	if (baseline)
		tui_screen_set_baseline(&t.screen, baseline, label);
	snapshot_unref(baseline);
	refresh_snapshot(&t);
	fe.fds[0] = fileno(tty_in ? tty_in : stdin);
	fe.fds[1] = winch_pipe[0];
	status = session_run(session, &fe);
	leave(&t); /* in case the run ended without it */
	tui_screen_free(&t.screen);
	theme_names_free(t.themes, t.nthemes);
	return status;
}
