/**
 * Two-turn dialogues made from HotpotQA bridge questions, for the follow-up benchmark (bench/conversation-follow-ups.ts).
 * Everything here is derived from the data by fixed rules; nothing is written by hand, nothing is copied into the
 * repository. The rules:
 *
 * 1. A bridge question. Of the question's two gold paragraphs, exactly one has a title (without its parenthetical,
 *    e.g. "Kiss and Tell" of "Kiss and Tell (1945 film)") that the question does not contain but the other gold
 *    paragraph's text does: that title is the bridge entity E, its paragraph the second hop B, the other paragraph
 *    the first hop A. The gold answer must occur in B (so turn 2 asks what B answers) and must not be E itself.
 * 2. The anchor: A's title, as the question writes it (case-insensitive). Questions that do not contain it are left
 *    out (their first hop is described rather than named).
 * 3. The span D that describes E: it starts at the determiner (`the`, `a`, `an`, `this`) of E's noun phrase —
 *    the last one before the first relative word (`who`, `whom`, `whose`, `which`, `that`, `where`) that follows
 *    the anchor's start, or, without one, the last one before the anchor — and ends
 *    - at the relative word, when the anchor comes before it (a participle followed by a preposition counts as
 *      one: "a video game developed by which company?" gives turn 2 "It was developed by which company?") ("Seven Brief Lessons on Physics was written by
 *      [an Italian physicist] that has worked in France since what year?"): turn 1 is the question up to the
 *      relative word with the determiner made `which` ("… was written by which Italian physicist?"), turn 2 a
 *      pronoun and the rest ("He has worked in France since what year?");
 *    - at the end of the anchor (and a closing quote), otherwise ("What government position was held by [the
 *      woman who portrayed Corliss Archer in the film Kiss and Tell]?"): turn 1 asks for D ("Who is the woman who
 *      portrayed Corliss Archer in the film Kiss and Tell?"), turn 2 is the question with D replaced by a pronoun
 *      ("What government position was held by her?").
 * 4. The pronoun: a person (`who`/`whom`/`whose`, or a head noun such as actor, writer, manager) gets he/him/his,
 *    or she/her when the description is of a woman (woman, actress, …); anything else it/its. The subject form
 *    starts a sentence or follows an auxiliary or a question word, the object form goes anywhere else.
 * 5. Kept only when turn 2 is a real follow-up: it no longer contains the anchor or any word of E's title, and it
 *    keeps a content word of its own.
 *
 * The assistant's answer to turn 1 comes in two forms in the benchmark: the sentence of A that names E, cited as
 * [1] (what a correct answer quotes), and Axon's own offline answer to turn 1.
 */
import type { BeirDataset } from '../src/eval/beir.ts';

/** One generated dialogue. */
export interface FollowUpDialogue {
  /** The HotpotQA question id. */
  queryId: string;
  /** The original question: the ceiling. */
  original: string;
  /** Turn 1: asks for the bridge entity. */
  firstQuestion: string;
  /** Turn 2: asks about it with a pronoun. */
  followUp: string;
  /** Turn 2 with the bridge entity's name where the pronoun is: what a perfect rewrite would search. */
  resolved: string;
  /** The bridge entity (B's title without its parenthetical). */
  bridge: string;
  /** The first hop's paragraph (A) and the second hop's (B): turn 2's gold document. */
  firstHopId: string;
  secondHopId: string;
  /** The sentences of A that name the bridge entity: the cited answer to turn 1. */
  bridgeSentences: string[];
  /** Which rule of 3 made it. */
  rule: 'relative-after-anchor' | 'description-with-anchor';
}

/** Why the other bridge questions were left out, counted. */
export interface DialogueGeneration {
  dialogues: FollowUpDialogue[];
  bridgeQuestions: number;
  leftOut: Record<string, number>;
}

const RELATIVE = /\b(who|whom|whose|which|that|where)\b/gi;
const DETERMINER = /\b(the|a|an|this|another|what|which)\s/gi;
const REDUCED_RELATIVE = /\b(\p{L}+ed|born|known|written|made|built|held|run|led|owned|sold|set)(?=\s+(?:in|by|at|on|for|from|as|during|near|under)\b)/giu;
const PREPOSITIONS = new Set(['by', 'of', 'for', 'with', 'from', 'to', 'at', 'in', 'on', 'about', 'under', 'over', 'into', 'after', 'before', 'during']);
const PERSON_NOUNS =
  /\b(?:man|woman|person|actor|actress|singer|songwriter|musician|rapper|guitarist|drummer|player|footballer|cricketer|manager|coach|director|producer|writer|author|novelist|poet|playwright|journalist|physicist|scientist|historian|politician|senator|president|king|queen|prince|princess|emperor|chief|father|mother|son|daughter|brother|sister|wife|husband|artist|painter|composer|designer|architect|founder|ceo|officer|pilot|host|comedian|model|dancer|lawyer|judge|ruler|warrior|industrialist|statesman|member|captain|champion|holder|inventor|engineer|professor|teacher|student|mayor|governor|minister|bishop|pope|saint|leader|owner|star|character|protagonist|performer|entrepreneur|businessman|businesswoman|economist|philosopher|psychologist|cartoonist|illustrator|creator)s?\b/i;
const FEMALE_NOUNS = /\b(?:woman|actress|queen|princess|mother|daughter|sister|wife|girl|lady|businesswoman|heiress|duchess)\b/i;
const AUXILIARIES = new Set(['is', 'was', 'are', 'were', 'did', 'does', 'do', 'has', 'have', 'had', 'will', 'would', 'can', 'could']);
const STOPWORDS = new Set(
  'a an and are as at be been but by can could did do does for from had has have how i if in into is it its of on or so than that the their them then there these they this to was were what when where which who whom whose why will with would he him his she her hers'.split(
    ' ',
  ),
);

/** Generate the dialogues of a HotpotQA copy in BEIR layout, by the rules above, in query order. */
export function followUpDialogues(dataset: BeirDataset): DialogueGeneration {
  const corpus = new Map(dataset.corpus.map((document) => [document.id, document]));
  const leftOut: Record<string, number> = {};
  const skip = (reason: string) => {
    leftOut[reason] = (leftOut[reason] ?? 0) + 1;
  };
  const dialogues: FollowUpDialogue[] = [];
  let bridgeQuestions = 0;
  for (const query of dataset.queries) {
    const gold = [...(dataset.qrels.get(query.id)?.keys() ?? [])].map((id) => corpus.get(id)).filter((document) => document !== undefined);
    if (gold.length !== 2) continue;
    const question = query.text.replace(/\s+/g, ' ').trim();
    const lower = question.toLowerCase();
    const pairs = [
      [gold[0], gold[1]],
      [gold[1], gold[0]],
    ].filter(
      ([first, second]) => !lower.includes(bareTitle(second.title).toLowerCase()) && first.text.toLowerCase().includes(bareTitle(second.title).toLowerCase()),
    );
    const answers = Array.isArray(query.metadata.answers) ? query.metadata.answers.filter((answer): answer is string => typeof answer === 'string') : [];
    if (pairs.length !== 1 || answers.length === 0 || /^(?:yes|no)$/i.test(answers[0])) continue;
    const [firstHop, secondHop] = pairs[0];
    const bridge = bareTitle(secondHop.title);
    const answer = answers[0].toLowerCase();
    if (answer === bridge.toLowerCase() || !secondHop.text.toLowerCase().includes(answer)) continue;
    bridgeQuestions++;

    const anchor = bareTitle(firstHop.title);
    const anchorAt = lower.indexOf(anchor.toLowerCase());
    if (anchor.length < 3 || anchorAt < 0) {
      skip('the question does not name the first hop');
      continue;
    }
    let anchorEnd = anchorAt + anchor.length;
    if (/^["'”’)]/.test(question.slice(anchorEnd))) anchorEnd++;
    // A relative word after a preposition ("under which") or a comma (a clause about the phrase before) opens no description.
    const relatives = [...question.matchAll(RELATIVE)].filter(
      (match) => match.index > 0 && !PREPOSITIONS.has(wordBefore(question, match.index)) && !question.slice(0, match.index).trimEnd().endsWith(','),
    );
    const determiners = [...question.matchAll(DETERMINER)];
    const relativeBefore = relatives.filter((match) => match.index < anchorAt).at(-1);
    // "… in a video game developed by which company?": a participle after the noun is a relative clause cut short.
    const reduced = [...question.matchAll(REDUCED_RELATIVE)].find(
      (match) => match.index >= anchorEnd && !AUXILIARIES.has(wordBefore(question, match.index)) && !PREPOSITIONS.has(wordBefore(question, match.index)),
    );
    const relativeAfter = [relatives.find((match) => match.index >= anchorEnd), reduced]
      .filter((match) => match !== undefined)
      .sort((left, right) => left.index - right.index)[0];

    let firstQuestion: string;
    let followUp: string;
    let resolved: string;
    let rule: FollowUpDialogue['rule'];
    if (relativeBefore === undefined && relativeAfter !== undefined) {
      // "X was written by [an Italian physicist] that has worked …": E is named by its head noun, then asked about.
      const determiner = determiners.filter((match) => match.index >= anchorEnd && match.index < relativeAfter.index).at(-1);
      if (determiner === undefined) {
        skip('no determiner opens the description of the bridge entity');
        continue;
      }
      const head = question.slice(determiner.index + determiner[0].length, relativeAfter.index).trim();
      const { person, female } = personOf(head, relativeAfter[1]);
      firstQuestion = `${question.slice(0, determiner.index)}which ${head}?`;
      const pronoun = relativeAfter[1].toLowerCase() === 'whose' ? (person ? (female ? 'Her' : 'His') : 'Its') : person ? (female ? 'She' : 'He') : 'It';
      const rest =
        relativeAfter === reduced ? `was ${question.slice(relativeAfter.index).trim()}` : question.slice(relativeAfter.index + relativeAfter[0].length).trim();
      followUp = `${pronoun} ${rest}`;
      resolved = `${relativeAfter[1].toLowerCase() === 'whose' ? `${bridge}'s` : bridge} ${rest}`;
      rule = 'relative-after-anchor';
    } else {
      // "… held by [the woman who portrayed Corliss Archer in the film Kiss and Tell]?", "[The director of the
      // romantic comedy "Big Stone Gap"] is based …": a description of E that holds the anchor.
      let determiner: RegExpMatchArray | undefined;
      if (relativeBefore !== undefined) determiner = determiners.filter((match) => match.index! < relativeBefore.index).at(-1);
      else {
        // Without a relative word, the anchor's phrase must hang on "the <noun> of …", or it describes A, not E.
        determiner = ofChainStart(question, anchorAt, determiners);
      }
      if (determiner === undefined) {
        skip('no description of the bridge entity holds the first hop');
        continue;
      }
      const start = determiner.index!;
      let end = relativeBefore === undefined ? anchorEnd : question.replace(/[\s?]+$/, '').length;
      if (start === 0) {
        // The description is the subject: it runs to the verb (the first auxiliary after the anchor).
        const verb = [...question.slice(anchorEnd).matchAll(/\b(?:is|was|are|were|has|have|had|can|could|will|would|did|does|do|also)\b/g)][0];
        if (verb === undefined) {
          skip('no verb follows the description');
          continue;
        }
        end = anchorEnd + verb.index;
      } else if (relativeBefore !== undefined && AUXILIARIES.has(wordBefore(question, start))) {
        // "When was [the British author who wrote …] born?": the subject of an inverted question; its last word is the verb.
        end = question.slice(0, end).replace(/\s+\S+$/, '').length;
      }
      const description = question.slice(start, end).trim();
      const { person, female } = personOf(description.split(/\s+(?:who|whom|whose|which|that|where|of)\s/i)[0], relativeBefore?.[1]);
      firstQuestion = `${person ? 'Who' : 'What'} is ${description.replace(/^(?:The|A|An|This)\b/, (word) => word.toLowerCase())}?`;
      const before = wordBefore(question, start);
      const subject = before === '' || AUXILIARIES.has(before) || /^(?:what|when|where|which|who|how|why)$/.test(before);
      let pronoun = person ? (female ? (subject ? 'she' : 'her') : subject ? 'he' : 'him') : 'it';
      if (start === 0) pronoun = pronoun[0].toUpperCase() + pronoun.slice(1);
      const around = (middle: string) => `${question.slice(0, start)}${middle} ${question.slice(end)}`.replace(/\s+/g, ' ').replace(/\s+\?/, '?');
      followUp = around(pronoun);
      resolved = around(bridge);
      rule = 'description-with-anchor';
    }

    const followUpWords = new Set(contentWords(followUp));
    if (followUp.toLowerCase().includes(anchor.toLowerCase()) || contentWords(bridge).some((word) => followUpWords.has(word))) {
      skip('turn 2 would still name the first hop or the bridge entity');
      continue;
    }
    if (contentWords(followUp).length < 1) {
      skip('turn 2 would keep no content word');
      continue;
    }
    const bridgeSentences = sentencesNaming(firstHop.text, bridge);
    dialogues.push({
      queryId: query.id,
      original: question,
      firstQuestion,
      followUp,
      resolved,
      bridge,
      firstHopId: firstHop.id,
      secondHopId: secondHop.id,
      bridgeSentences,
      rule,
    });
  }
  return { dialogues, bridgeQuestions, leftOut };
}

// --- Internal helpers ---

function wordBefore(text: string, index: number): string {
  return text.slice(0, index).trim().split(/\s+/).at(-1)?.toLowerCase() ?? '';
}

/** Whether a description names a person (and a woman): by its relative word or its head noun. */
function personOf(head: string, relative: string | undefined): { person: boolean; female: boolean } {
  const person = /^(?:who|whom|whose)$/i.test(relative ?? '') || PERSON_NOUNS.test(head);
  return { person, female: person && FEMALE_NOUNS.test(head) };
}

/**
 * "[the director of] the romantic comedy …", "[this singer of] A Rather Blustery Day": the determiner of the phrase
 * that `of` attaches the anchor's phrase (the anchor, or a determiner at most four words before it) to, within five
 * words before the `of`; undefined when the anchor hangs on no such phrase.
 */
function ofChainStart(question: string, anchorAt: number, determiners: RegExpMatchArray[]): RegExpMatchArray | undefined {
  const own = determiners.filter((match) => match.index! < anchorAt && question.slice(match.index!, anchorAt).trim().split(/\s+/).length <= 4).at(-1);
  const phraseAt = own !== undefined && !/\bof\b/.test(question.slice(own.index!, anchorAt)) ? own.index! : anchorAt;
  if (wordBefore(question, phraseAt) !== 'of') return undefined;
  const ofAt = question.slice(0, phraseAt).trimEnd().length - 2;
  return determiners.filter((match) => match.index! < ofAt && question.slice(match.index!, ofAt).trim().split(/\s+/).length <= 5).at(-1);
}

/** A title without its trailing parenthetical: "Kiss and Tell (1945 film)" → "Kiss and Tell". */
function bareTitle(title: string): string {
  return title.replace(/\s*\([^)]*\)\s*$/, '').trim();
}

function contentWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((word) => word.length > 1 && !STOPWORDS.has(word));
}

/** The sentences of a paragraph that contain `name` (case-insensitive); the whole paragraph if the split finds none. */
function sentencesNaming(text: string, name: string): string[] {
  const sentences = text.split(/(?<=[.!?])\s+(?=[A-Z0-9"“])/);
  const naming = sentences.filter((sentence) => sentence.toLowerCase().includes(name.toLowerCase()));
  return naming.length > 0 ? naming : [text];
}
